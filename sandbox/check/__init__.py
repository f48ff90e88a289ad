"""Stage 4, check: the parent's calls into both workers, the output comparisons, the reference's
own check and compile caches, and who is to blame when the reference fails."""

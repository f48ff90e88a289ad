"""Stage 1, intake: the task (a reference op and its metadata, its data size, its sanity checks)
and the candidate (which class is judged, the static scan of its source), before anything runs."""

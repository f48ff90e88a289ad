"""kernel-harness: a common, cheat-resistant harness for LLM-driven GPU kernel optimizers."""

__version__ = "0.1.0"

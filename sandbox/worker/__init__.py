"""The judging worker and its protocol: the process that imports and runs code (``python -m
sandbox.worker``), its channel and shared-memory arena, and the parent's handle on it (the session).
Kept free of imports: the worker starts by importing this package before its monitors are armed."""

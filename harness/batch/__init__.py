"""``harness eval-batch``: judge many (reference, candidate) pairs through an executor.

``inputs.py`` reads the pairs (a KernelBench-style tree, a folder for one reference, a JSONL
manifest), ``driver.py`` judges them (``run_batch``), ``output.py`` writes the rows and
verdicts and finds what an earlier run judged, ``record.py`` stores the batch as an
evaluation-only run (``--store``).
"""

"""The reference op suite: one KernelBench-format file per op under <category>/<op>.py,
named suites in suites.toml. Load ops through ``harness.suite`` (``load_task``, ``resolve``);
the files are data, not modules to import."""

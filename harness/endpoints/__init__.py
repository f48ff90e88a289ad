"""Local HTTP endpoints that let a method run as an isolated program (docs/method-protocol.md).

``eval_server``: the evaluation endpoint (task context, feedback verdicts); ``launcher``:
starts a method program next to it and the LLM gateway; ``method_main``: the shim that runs
any built-in or submission method as such a program; ``client``: the program-side helpers.
"""

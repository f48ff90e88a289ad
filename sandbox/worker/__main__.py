"""``python -m sandbox.worker``: start the judging worker (sandbox/worker/serve.py, its requests in
sandbox/worker/main.py).

``Worker`` is bound here too, so the running worker's class is ``sys.modules['__main__'].Worker``
as it was when the worker was one module: the red team's patching attacks (cheat 07c) keep
meeting the same target."""

import sys

from sandbox.worker.main import Worker  # noqa: F401
from sandbox.worker.serve import main

sys.exit(main())

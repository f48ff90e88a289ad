"""Progress lines on a stream: rewritten in place on a terminal, one per line elsewhere (a log
file, a CI console). The run's progress (harness/runner/progress.py) and the batch's
(harness/batch/driver.py) both write through ``StatusLines``."""

from __future__ import annotations

import sys
from typing import TextIO


class StatusLines:
    def __init__(self, stream: TextIO | None = None, enabled: bool = True) -> None:
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def _emit(self, line: str, final: bool = False) -> None:
        """Show ``line``; ``final``: keep it (end it with a newline even on a terminal)."""
        if not self.enabled:
            return
        if self._tty:
            self.stream.write("\r\033[K" + line + ("\n" if final else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

"""Errors a user can act on: the CLI prints their message as one line and exits 2
(``harness/cli/__init__.py: LazyGroup.invoke``), never a traceback. The message names the file,
the field and the fix."""

from __future__ import annotations

import errno

# file-system errors a user fixes by choosing another path (permissions, read-only, full, not a folder)
PATH_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.ENOSPC, errno.ENOTDIR, errno.EISDIR, errno.EDQUOT}


class UserError(Exception):
    """A bad input or an unusable path: one line, exit 2."""


def path_message(e: OSError) -> str | None:
    """One line for an OSError a user fixes by choosing another path; None for anything else."""
    if e.errno not in PATH_ERRNOS or not (e.filename or e.filename2):
        return None
    what = e.strerror or str(e)
    return f"{e.filename or e.filename2}: {what.lower()}; choose a writable folder (e.g. --results/--out elsewhere)"

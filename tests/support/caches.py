"""A fresh build cache for a test, without the op counter's compile.

Every judgement builds sandbox/rules/opcount.py's library into its cache's trusted tier before its clock
starts (20-60 s of C++ on a 2-core box against torch's headers). A test that needs a cache of its
own (to see a candidate built, not found) is not about that library: ``fresh_build_cache`` makes
the folder with the library already in place, copied from the default cache (built there once per
machine and torch).
"""

from __future__ import annotations

import shutil
from pathlib import Path


def fresh_build_cache(root: str | Path) -> Path:
    """``root`` as an empty build cache holding only the op counter (``EvalConfig.build_dir``)."""
    from sandbox.build.buildcache import default_root
    from sandbox.rules import opcount

    root = Path(root)
    trusted = root / "trusted"
    trusted.mkdir(parents=True, exist_ok=True)
    built, why_not = opcount.ensure(str(default_root() / "trusted"))
    if built is not None:
        src = Path(built).parent
        if not (trusted / src.name).exists():
            shutil.copytree(src, trusted / src.name)
    return root

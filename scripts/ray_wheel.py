"""Make Ray's wheel small enough to carry to the device machine (its working-tree limit is 64 MiB).

    # the device's Python is 3.12; .whl/ is git-ignored and travels with `carry: [".whl"]`
    pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
        -d .whl ray==2.60.0 msgpack jsonschema jsonschema-specifications referencing rpds-py attrs
    python scripts/ray_wheel.py .whl/ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl

Ray 2.60's wheel is 79 MB; 32 MB of it is the Java jar and a few more are libraries the Ray
executor never imports (RLlib, Tune, Train, Data, Serve, LLM, the dashboard's web client). The
wheel is rewritten in place without them, RECORD included, so ``pip install`` takes it as is.
The core (``ray._raylet``, the GCS server, the raylet, the runtime-env agent) is kept whole.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile

DROP = ("ray/jars/", "ray/rllib/", "ray/tune/", "ray/train/", "ray/data/", "ray/serve/", "ray/llm/",
        "ray/dashboard/client/build/")


def dropped(name: str) -> bool:
    return name.startswith(DROP)


def strip(path: str) -> tuple[int, int]:
    before = os.path.getsize(path)
    fd, tmp = tempfile.mkstemp(suffix=".whl", dir=os.path.dirname(path) or ".")
    os.close(fd)
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if dropped(info.filename):
                continue
            data = src.read(info)
            if info.filename.endswith(".dist-info/RECORD"):
                lines = data.decode().splitlines()
                data = ("\n".join(x for x in lines if not dropped(x.split(",", 1)[0])) + "\n").encode()
            dst.writestr(info, data)  # keeps external_attr: the raylet and GCS server stay executable
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    return before, os.path.getsize(path)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        b, a = strip(p)
        print(f"{p}: {b / 1e6:.1f} MB -> {a / 1e6:.1f} MB")

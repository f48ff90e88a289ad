"""``harness doctor``: say what this machine can do (GPU, nvcc, Triton, sandboxes, engines)."""

from __future__ import annotations

import json

import click

from harness.env.probe import probe_all


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def cli(as_json: bool) -> None:
    """Probe Python, torch/CUDA, GPUs, nvcc, Triton, docker/podman, bwrap/unshare and disk,
    and say what that means (which candidates can be judged here, which isolation is used)."""
    r = probe_all()
    if as_json:
        click.echo(json.dumps(r.to_dict(), indent=2))
        return
    rows: list[tuple[str, str, str]] = [
        ("python", "ok", r.python),
        ("platform", "ok", r.platform),
        (
            "torch",
            "ok" if r.torch != "missing" else "MISSING",
            f"{r.torch} (CUDA {r.torch_cuda or 'none: CPU build'})",
        ),
    ]
    if r.gpus:
        for g in r.gpus:
            rows.append(
                (
                    f"gpu {g.index}",
                    "ok",
                    f"{g.name}, {g.memory_gib} GiB, {g.sm_count} SMs, sm_{g.capability.replace('.', '')}",
                )
            )
        rows.append(("driver", "ok" if r.driver else "?", r.driver or "unknown"))
    else:
        rows.append(("gpu", "none", "no CUDA device visible to torch"))
    for t in r.tools:
        rows.append(
            (
                t.name,
                "ok" if t.ok else "no",
                " ".join(x for x in (t.version, f"({t.detail})" if t.detail else "") if x),
            )
        )
    for path, free in r.disk_free_gib.items():
        rows.append(("disk free", "ok" if free >= 5 else "low", f"{free} GiB at {path}"))
    w0 = max(len(a) for a, _, _ in rows)
    for name, status, detail in rows:
        click.echo(f"{name:<{w0}}  {status:<7} {detail}")
    click.echo("")
    wq = max(len(q) for q, _ in r.conclusions)
    for q, a in r.conclusions:
        click.echo(f"{q + ':':<{wq + 1}} {a}")

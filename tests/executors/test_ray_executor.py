"""The Ray executor on a cluster of two Ray nodes on this host (two raylets started with ``ray
start``, one CPU each, each with its own build cache, as separate hosts have their own disks):
the session's shared offline relu run (tests/support/offline_run.py), run again through ``harness
run --executor ray --ray-address``, gives the local executor's verdicts; builds are spread over
both nodes, each judgement runs on the node that built it, each node builds into its own cache,
and the run records the cluster's nodes. Slow. A node that differs from the driver is refused
(``check``, fast).

CI installs Ray (the ``dev`` extra): the test skips only where Ray is not installed, and a Ray that
is installed but cannot start is a failure, not a skip."""

from __future__ import annotations

import json

import pytest

from harness.executors.raynode import NodeIdentity, NodeMismatch, check
from tests.support import cli
from tests.support.offline_run import ARGS, RUN_ID

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'kernel-harness[ray]')")


def ray_args(address: str) -> list[str]:
    args = list(ARGS)
    i = args.index("--executor")
    args[i + 1] = "ray"
    j = args.index("--compile-workers")
    del args[j:j + 2]
    return [*args, "--ray-address", address]


@pytest.mark.slow
def test_a_two_node_ray_cluster_gives_the_local_executors_verdicts(tmp_path, offline_relu_run):
    from tests.support.raycluster import ray_cluster

    assert offline_relu_run.returncode == 0, offline_relu_run.output
    caches = [tmp_path / "node0-cache", tmp_path / "node1-cache"]
    with ray_cluster(tmp_path, [{"HARNESS_CACHE": str(c)} for c in caches]) as cluster:
        r = cli.harness(*ray_args(cluster.address), "--results", tmp_path / "ray", env=cluster.env, timeout=1500)
        logs = cluster.log_tails()
    assert r.returncode == 0, r.stdout + r.stderr + logs
    import sqlite3

    con = sqlite3.connect(tmp_path / "ray" / "harness.sqlite")
    try:
        got = [tuple(x) for x in con.execute("SELECT op, mode, status, rule FROM verdicts ORDER BY verdict_id")]
        where = [json.loads(v).get("evidence", {}).get("executor", {}) for (v,) in
                 con.execute("SELECT verdict_json FROM verdicts ORDER BY verdict_id")]
        config = json.loads(con.execute("SELECT config_json FROM runs WHERE run_id=?", (RUN_ID,)).fetchone()[0])
    finally:
        con.close()
    local = offline_relu_run.statuses()
    assert len(local) >= 3
    # every trial's feedback verdict is the same; which kernel gets a final judgement is the
    # fastest one measured, and the seed kernel and the offline kernels are within timing noise of
    # each other on CPU relu (2026-11-26: 205 us vs 208 us made a trial the best in one run and the
    # seed in the other, adding the seed's own final judgement), so finals compare by status
    assert [x for x in got if x[1] != "final"] == [x for x in local if x[1] != "final"]
    assert {x[2:] for x in got if x[1] == "final"} == {x[2:] for x in local if x[1] == "final"}
    assert any(s == "valid" for _, _, s, _ in local), local  # the offline model's relu kernels include valid ones
    built = [w for w in where if w.get("build_node")]
    assert len({w["build_node"] for w in built}) == 2, where  # the builds went to both nodes
    assert all(w.get("judge_node") in (None, w["build_node"]) for w in built), where  # the judge followed
    for c in caches:  # each node built into its own cache (its HARNESS_CACHE)
        assert any((c / "build").rglob(".ok")), f"{c}: no build"
    nodes = config["executor"]["nodes"]
    assert config["executor"]["name"] == "ray" and len(nodes) == 2, config["executor"]
    assert len({n["judge_code"] for n in nodes}) == 1


def _node(**kw) -> NodeIdentity:
    base = dict(node_id="abcdef0123", host="gpu-7", judge_code="a" * 64, torch="2.13.0", gpu="NVIDIA H100 80GB HBM3")
    return NodeIdentity(**{**base, **kw})


@pytest.mark.parametrize("differs, words", [
    (dict(judge_code="b" * 64), "judges with other code than the driver"),
    (dict(torch="2.12.0"), "has torch 2.12.0"),
    (dict(gpu="NVIDIA H200"), "more than one GPU model in one run"),
])
def test_a_node_unlike_the_driver_or_the_runs_gpus_is_refused_by_name(differs, words):
    driver, gpus = _node(node_id="driver", host="head", gpu=None), {}
    check(driver, _node(), gpus)  # the first judge node sets the run's GPU model
    with pytest.raises(NodeMismatch, match=words) as e:
        check(driver, _node(node_id="9876543210", host="gpu-8", **differs), gpus)
    assert "gpu-8/98765432" in str(e.value)
    check(driver, _node(gpu="NVIDIA H200"))  # a CPU judgement's node is not held to the run's GPU

"""A real Ray cluster on loopback: a head node and a second node, started by the test (``ray start --head``,
``ray start --address``), one CPU each; ``generate`` and ``evaluate --ray <address> --workers 2`` put one actor on
each node and write the files of a local run; the nodes are stopped after (their own process groups only)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.guards import requires
from tests.support.ray_runs import without_timings, write_answers, write_questions

pytestmark = pytest.mark.slow

RAY = Path(sys.executable).parent / "ray"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def vericite(args, env, timeout=300):
    r = subprocess.run(["nice", "-n", "10", sys.executable, "-m", "vericite", *args], env=env, capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    requires("ray")
    port = free_port()
    address = f"127.0.0.1:{port}"
    env = {**os.environ, "RAY_AUTH_MODE": "token", "VERICITE_CACHE": str(tmp_path_factory.mktemp("cache"))}
    logs = tmp_path_factory.mktemp("ray")
    common = ["--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--disable-usage-stats", "--block"]
    nodes = []
    try:
        nodes.append(subprocess.Popen(["nice", "-n", "10", str(RAY), "start", "--head", "--port", str(port), "--include-dashboard", "false", *common],
                                      env=env, stdout=open(logs / "head.log", "w"), stderr=subprocess.STDOUT, start_new_session=True))
        wait_for_nodes(address, 1, env)
        nodes.append(subprocess.Popen(["nice", "-n", "10", str(RAY), "start", "--address", address, *common],
                                      env=env, stdout=open(logs / "node.log", "w"), stderr=subprocess.STDOUT, start_new_session=True))
        wait_for_nodes(address, 2, env)
        yield {"address": address, "env": env}
    finally:
        for p in reversed(nodes):  # each node in its own process group: this cluster's processes, nobody else's
            try:
                os.killpg(p.pid, signal.SIGTERM)
                p.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
            except ProcessLookupError:
                pass


def wait_for_nodes(address: str, n: int, env, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        r = subprocess.run([str(RAY), "status", "--address", address], env=env, capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.count(" node_") >= n:
            return
        time.sleep(1)
    pytest.fail(f"the Ray cluster at {address} did not reach {n} nodes in {timeout:.0f} s: {r.stdout[-500:]} {r.stderr[-500:]}")


def test_generate_and_evaluate_on_two_nodes(cluster, tmp_path):
    env = cluster["env"]
    q = write_questions(tmp_path / "q.jsonl", 12)
    common = ["generate", "--dataset", str(q), "--model", "fake", "--no-cache", "-q"]
    vericite([*common, "--out", str(tmp_path / "local")], env)
    # two actors of one CPU each on two nodes of one CPU each: one actor on each node
    vericite([*common, "--out", str(tmp_path / "ray"), "--ray", cluster["address"], "--workers", "2"], env)
    local, ray = ((tmp_path / d / "samples.jsonl").read_text(encoding="utf-8") for d in ("local", "ray"))
    assert local.count("\n") == 12 and without_timings(ray) == without_timings(local)

    a = write_answers(tmp_path / "answers.jsonl", 20)
    vericite(["evaluate", "-i", str(a), "-o", str(tmp_path / "ev-local"), "-q"], env)
    vericite(["evaluate", "-i", str(a), "-o", str(tmp_path / "ev-ray"), "-q", "--ray", cluster["address"], "--workers", "2"], env)
    rl, rr = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("ev-local", "ev-ray"))
    rl.pop("created"), rr.pop("created")
    assert rr == rl
    assert (tmp_path / "ev-ray" / "samples.jsonl").read_bytes() == (tmp_path / "ev-local" / "samples.jsonl").read_bytes()


def test_an_address_where_no_cluster_runs_is_one_line(tmp_path):
    requires("ray")
    q = write_questions(tmp_path / "q.jsonl", 2)
    r = subprocess.run([sys.executable, "-m", "vericite", "generate", "--dataset", str(q), "--model", "fake", "-q", "--out", str(tmp_path / "o"),
                        "--ray", f"127.0.0.1:{free_port()}"], capture_output=True, text=True, timeout=180)
    assert r.returncode != 0 and "cannot reach the Ray cluster" in r.stderr and "Traceback" not in r.stderr, r.stderr[-2000:]

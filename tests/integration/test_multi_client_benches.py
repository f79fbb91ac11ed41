"""Several load generators for real, each test with a multi-client bench of its own (test_multi_clients.py's
sshd hosts on loopback ports, its helpers): a client that starts late and the common window, a local and
an ssh client together, one client's YCSB killed, and findmax splitting its targets. A file of its own so
that these benches and test_multi_clients.py's shared run are two work units of `make test`'s workers."""

from __future__ import annotations

import json
import math
import os
import re
import signal
import threading
import time
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram
from pymongo import MongoClient
from test_multi_clients import (  # same folder
    HOSTS,
    SSHD,
    SUITE,
    argv_of,
    completed_run_step,
    own_processes,
    ssh_hosts,
)

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.errors import RunFailed
from ycsb_runner.parse.hdr import read_hdr_log

__all__ = ["ssh_hosts"]  # the module's fixture (test_multi_clients.py's)
pytestmark = pytest.mark.skipif(
    not Path(SSHD).exists(),
    reason="needs OpenSSH's sshd: sudo apt-get install openssh-server openssh-client "
    "(make test installs it as root)",
)


def _intervals(run_dir: Path, step: str, host: str, offset: float) -> list[tuple[float, float, object]]:
    """(start, end, interval) on the runner's clock of a client's READ and UPDATE logs."""
    out = []
    for section in ("READ", "UPDATE"):
        log = read_hdr_log(run_dir / "steps" / step / "clients" / host / "hdr" / f"{section}.hdr")
        for iv in log.intervals:
            start = (log.start_time_s or 0.0) + iv.start_s - offset
            out.append((start, start + iv.length_s, iv, section))
    return out


def test_common_window_of_three_clients_one_started_5s_late(
    ssh_hosts: Path, mongo_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """h3's YCSB starts 5 s after the go (as a slow JVM start would). The step's throughput must be that
    of the window where all three ran, checked here from the HDR logs alone, and its p99 that of one
    histogram of the same intervals; the old sum(ops) / max(runtime) figure is kept and differs."""
    from ycsb_runner.execute import multi

    real = multi.client_script
    made: list[str] = []

    def third_one_late(workdir: str, argv: list[str]) -> str:
        made.append(workdir)
        script = real(workdir, argv)
        if len(made) % 3 == 0:  # sessions are started in order h1, h2, h3
            go = "read go || { rm -f connection.properties; exit 98; }"
            assert go in script
            script = script.replace(go, go + "\nsleep 5", 1)
        return script

    monkeypatch.setattr(multi, "client_script", third_one_late)
    outcome = run_bench(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=tmp_path,
            clients=list(HOSTS),
            # paced (50 ops/s a client): what is checked is which intervals the window keeps and the
            # figures of those, not the server's speed; unpaced, three JVMs and the server took both cores
            overrides=["run.operationcount=100000000", "maxexecutiontime=15", "target=150"],
            report=False,
            canaries=False,  # (three_client_run measures them over ssh)
        ),
        log=lambda _m: None,
    )
    step = completed_run_step(outcome.run_dir)
    fig = step["figures"]
    offsets = {c["client"]: c["clock_offset_s"] for c in fig["clients"]}
    assert all(abs(o) < 0.5 for o in offsets.values())  # loopback: one clock, measured as such
    assert all(0 < c["clock_rtt_s"] < 1 for c in fig["clients"])
    spans, intervals = {}, []
    for h in HOSTS:
        mine = _intervals(outcome.run_dir, step["step"], h, offsets[h])
        spans[h] = (min(a for a, *_ in mine), max(b for _, b, *_ in mine))
        intervals += mine
    assert 2.5 <= spans["h3"][0] - spans["h1"][0] <= 12  # h3 really started late (JVM starts vary)
    w0, w1 = max(a for a, _ in spans.values()), min(b for _, b in spans.values())
    inside = [(iv, sec) for a, b, iv, sec in intervals if w0 <= (a + b) / 2 <= w1]
    independent = sum(iv.total for iv, _ in inside) / (w1 - w0)
    ours, old = step["throughput_ops_s"], fig["throughput_sum_over_max_runtime_ops_s"]
    union = fig["throughput_union_ops_s"]
    print(
        f"\ncommon window {w1 - w0:.1f}s (ours {fig['common_window_s']:.1f}s): {ours:.1f} ops/s, independent "
        f"{independent:.1f}; union {fig['union_s']:.1f}s {union:.1f} ops/s; old sum/max {old:.1f} ops/s; "
        f"offsets {offsets}"
    )
    assert abs(ours - independent) <= 0.05 * independent
    # (the old sum/max figure is printed, not asserted: with some start and end times it equals the
    # common-window rate by chance, 86.5 vs 86.3 ops/s in a fresh clone)
    ops = outcome.result.operations
    merged = ops[(ops["phase"] == "run") & (ops["client"] == "all")].set_index("section")
    for section in ("READ", "UPDATE"):
        one = HdrHistogram(1, 3_600_000_000, 3)
        for iv, sec in inside:
            if sec == section:
                for i in iv.counts.nonzero()[0]:
                    one.record_value(int(iv.layout.lowest_values(i.reshape(1))[0]), int(iv.counts[i]))
        assert merged.at[section, "p99_us"] == one.get_value_at_percentile(99), section
        assert merged.at[section, "union_operations"] > one.get_total_count()  # the union is kept beside


def test_two_clients_local_and_ssh(ssh_hosts: Path, mongo_url: str, tmp_path: Path) -> None:
    outcome = run_bench(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=tmp_path,
            clients=["local", "h2"],
            overrides=["recordcount=201", "operationcount=301"],
            report=True,
            canaries=False,  # (four BasicDB JVMs: three_client_run measures them over ssh)
        ),
        log=lambda _m: None,
    )
    with MongoClient(mongo_url) as c:
        assert c.ycsb.usertable.count_documents({}) == 201
    ops = outcome.result.operations
    ins = ops[(ops["phase"] == "load") & (ops["section"] == "INSERT")].set_index("client")
    assert int(ins.at["local", "operations"]) == 101 and int(ins.at["h2", "operations"]) == 100
    run = ops[(ops["phase"] == "run") & ops["section"].isin(["READ", "UPDATE"])]
    assert run.groupby("client")["operations"].sum().to_dict() == {"all": 301, "local": 151, "h2": 150}
    assert outcome.report is not None and outcome.report.stat().st_size > 0  # the report reads it too


def test_killing_one_clients_ycsb_fails_the_step_and_stops_the_others(
    ssh_hosts: Path, mongo_url: str, tmp_path: Path
) -> None:
    killed: list[int] = []
    ours: set[int] = set()

    def kill_one_run_phase() -> None:
        deadline = time.time() + 120
        while time.time() < deadline and not killed:
            javas = [
                p
                for p in own_processes()
                if "site.ycsb.Client" in " ".join(argv := argv_of(p))
                and "-t" in argv
                and "ycsb-runner-client-" in " ".join(argv)
            ]
            if len(javas) == 3 and time.time() - min(p.create_time() for p in javas) > 4:
                for p in javas:  # this step's clients and their shells (not another test's, beside it)
                    ours.update([p.pid, *[q.pid for q in p.parents()[:1]]])
                os.kill(javas[0].pid, signal.SIGKILL)
                killed.append(javas[0].pid)
                killed_at.append(time.time())
                return
            time.sleep(0.2)

    killed_at: list[float] = []
    killer = threading.Thread(target=kill_one_run_phase, daemon=True)
    killer.start()
    with pytest.raises(RunFailed) as err:
        run_bench(
            BenchOptions(
                suite=SUITE,
                url=mongo_url,
                results=tmp_path,
                clients=list(HOSTS),
                overrides=["maxexecutiontime=120", "run.operationcount=100000000", "target=60"],
                report=False,
                canaries=False,
            ),
            log=lambda _m: None,
        )
    after_kill = time.time() - killed_at[0] if killed_at else math.inf
    killer.join()
    assert killed, "no run-phase YCSB was seen to kill"
    # the others were stopped, not waited for: they had about 115 s of their 120 s left (a relation with a
    # wide margin, not a timing: this machine's load made the old 40 s bound fail at 46 s)
    assert after_kill < 60, after_kill
    run_dir = next(tmp_path.iterdir())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    step = manifest["steps"][-1]
    assert step["phase"] == "run" and step["status"] == "failed"
    victim = [c for c in step["figures"]["clients"] if c["exit_code"] == 137]
    assert len(victim) == 1
    name = victim[0]["client"]
    assert re.search(rf"client {name}: YCSB ended by signal 9", " ".join(step["reasons"]))
    assert f"client {name}" in str(err.value)
    others = [c for c in step["figures"]["clients"] if c["client"] != name]
    assert all(c["stopped"] for c in others)
    for c in step["figures"]["clients"]:  # every client's logs kept, the stopped ones' status lines too
        d = run_dir / "steps" / step["step"] / "clients" / c["client"]
        assert "operations;" in (d / "stderr.txt").read_text(), c["client"]
    assert ours and not [pid for pid in ours if "ycsb-runner-client-" in " ".join(argv_of(pid))]


def test_findmax_splits_each_probes_target_across_the_clients(
    ssh_hosts: Path, mongo_url: str, tmp_path: Path
) -> None:
    from ycsb_runner.bench import run_findmax
    from ycsb_runner.findmax.search import FindmaxOptions, make_bound

    outcome = run_findmax(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=tmp_path,
            clients=["local", "h2"],
            report=False,
            canaries=False,
        ),
        FindmaxOptions(mix=None, bound=make_bound(avg="10s"), probe_s=4, max_probes=2, start=41),
        log=lambda _m: None,
    )
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    probes = manifest["findmax"]["probes"]
    assert [p["target"] for p in probes][:1] == [41] and len(probes) == 2
    runs = {s["step"]: s for s in manifest["steps"] if s["phase"] == "run" and s["client"] == "all"}
    for p in probes:
        shares = {c["client"]: c["target"] for c in runs[p["step"]]["figures"]["clients"]}
        assert sum(shares.values()) == p["target"] and set(shares) == {"local", "h2"}
        assert abs(shares["local"] - shares["h2"]) <= 1
        # both clients' rates over their full intervals: paced by the split target, not by the whole one
        # (which would be 2x). Not within 10 % of it: YCSB catches up after a stall, so beside two CPU
        # burners full intervals ran at 1.31x (53.8 ops/s at 41), and 13 % under the common-window rate.
        assert 0 < p["throughput_ops_s"] <= 1.5 * p["target"], p
        assert p["throughput_ops_s"] >= 0.97 * p["target"] or not p["passed"]

"""ClientSampler on a real busy process tree, the pure client summaries, and the bottleneck warnings."""

from __future__ import annotations

import math
import subprocess
import sys
import time

import psutil
import pytest

from ycsb_runner.monitors.client import (
    ClientSample,
    ClientSampler,
    CpuTimes,
    client_bottleneck_warnings,
    client_summary,
    client_time_series,
)

# a parent that only waits for a child that burns CPU: like bin/ycsb (python) starting java. The child says
# "ready", burns CHILD_CPU_S seconds of its own CPU time after "go" on stdin (however long a busy machine
# takes to give it that), says "done" and waits for stdin to close: the work is a count, not a time window.
CHILD_CPU_S = 0.5
BUSY_TREE = (
    "import subprocess, sys\n"
    "child = ('import sys, time\\nprint(\"ready\", flush=True)\\nsys.stdin.readline()\\n'\n"
    f"         'while time.process_time() < {CHILD_CPU_S}: pass\\n'\n"
    "         'print(\"done\", flush=True)\\nsys.stdin.read()\\n')\n"
    "subprocess.run([sys.executable, '-c', child])\n"
)


def test_sampler_follows_a_busy_process_tree() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", BUSY_TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        assert proc.stdout.readline().strip() == "ready"
        with ClientSampler(interval_s=0.2) as sampler:
            sampler.attach(proc.pid)
            first = sampler.sample_now()
            parent_before = sum(psutil.Process(proc.pid).cpu_times()[:2])
            proc.stdin.write("go\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "done"
            parent_after = sum(psutil.Process(proc.pid).cpu_times()[:2])
            last = sampler.sample_now()
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        proc.kill()
    assert first is not None and last is not None
    assert sampler.errors == [] or all("psutil pid" in e.message for e in sampler.errors)
    summary = sampler.summary(first.t, last.t)
    ncpu = psutil.cpu_count()
    assert summary["ncpu"] == ncpu
    assert summary["n_samples"] >= 2
    # the child's CPU is counted: all the work it did between the two samples, and far more than the
    # waiting parent's own time (which is counted too: the tree is parent + children)
    tree_cpu = summary["ycsb_cpu_core_pct"] / 100 * summary["duration_s"]
    assert last.proc_cpu_s >= CHILD_CPU_S - 0.02, summary  # CPU times tick in 10 ms
    assert tree_cpu >= CHILD_CPU_S - first.proc_cpu_s - 0.02, summary
    assert tree_cpu == pytest.approx(last.proc_cpu_s - first.proc_cpu_s)
    assert tree_cpu > 5 * (parent_after - parent_before)
    assert summary["ycsb_cpu_core_pct"] <= 100.0 * ncpu + 5
    assert 0 < summary["host_cpu_pct"] <= 100
    # the busiest core is at least as busy as the average over all cores
    assert summary["host_core_pct_max"] >= summary["host_cpu_pct"] - 1e-9
    assert summary["ycsb_rss_max_bytes"] > 1e6
    assert summary["mem_used_max_bytes"] > 0
    assert summary["net_sent_bytes"] >= 0 and summary["net_recv_bytes"] >= 0
    ts = sampler.time_series()
    assert len(ts) >= 1 and ts["dt_s"].gt(0).all()
    print(
        f"\nbusy child: {tree_cpu:.2f} CPU-s in {summary['duration_s']:.2f} s,"
        f" host {summary['host_cpu_pct']:.0f}% (max core {summary['host_core_pct_max']:.0f}%),"
        f" rss {summary['ycsb_rss_max_bytes'] / 1e6:.0f} MB"
    )


def test_process_end_is_recorded_and_sampling_goes_on() -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=10)
    sampler = ClientSampler(pid=proc.pid, interval_s=0.1).start()
    time.sleep(0.3)
    sampler.stop()
    assert len(sampler.samples) >= 3
    assert any(f"psutil pid {proc.pid}" in e.message for e in sampler.errors)
    assert all(math.isnan(s.proc_cpu_s) for s in sampler.samples)
    summary = sampler.summary()
    assert math.isnan(summary["ycsb_cpu_core_pct"]) and not math.isnan(summary["host_cpu_pct"])


def _sample(
    t: float, busy: float, total: float, proc_cpu: float, cores: tuple[tuple[float, float], ...]
) -> ClientSample:
    return ClientSample(
        t=t,
        mono=t,
        host=CpuTimes(busy, total),
        per_core=tuple(CpuTimes(b, tt) for b, tt in cores),
        proc_cpu_s=proc_cpu,
        proc_rss_bytes=1e8 + t,
        mem_used_bytes=2e9,
        net_sent_bytes=1000.0 * t,
        net_recv_bytes=3000.0 * t,
    )


def test_client_summary_pure() -> None:
    # 2 cores; 10 s: host busy 15 of 20 core-s, core0 fully busy in the 2nd interval, process used 12 s
    samples = [
        _sample(0.0, 0.0, 0.0, 0.0, ((0.0, 0.0), (0.0, 0.0))),
        _sample(5.0, 5.0, 10.0, 4.0, ((3.0, 5.0), (2.0, 5.0))),
        _sample(10.0, 15.0, 20.0, 12.0, ((8.0, 10.0), (7.0, 10.0))),
    ]
    s = client_summary(samples)
    assert s["duration_s"] == 10.0
    assert s["host_cpu_pct"] == pytest.approx(75.0)
    assert s["host_cpu_pct_max"] == pytest.approx(100.0)
    assert s["host_core_pct_max"] == pytest.approx(100.0)
    assert s["ycsb_cpu_core_pct"] == pytest.approx(120.0)
    assert s["ycsb_cpu_core_pct_max"] == pytest.approx(160.0)
    assert s["net_sent_per_s"] == pytest.approx(1000.0) and s["net_recv_bytes"] == pytest.approx(30000.0)
    ts = client_time_series(samples)
    assert list(ts["host_cpu_pct"]) == pytest.approx([50.0, 100.0])
    one = client_summary(samples[:1])
    assert math.isnan(one["host_cpu_pct"]) and one["n_samples"] == 1


def test_bottleneck_warnings() -> None:
    calm = {"host_cpu_pct": 40.0, "ycsb_cpu_core_pct": 70.0}
    assert client_bottleneck_warnings(calm, target_ops=0, achieved_ops=5000, ncpu=2) == []
    assert client_bottleneck_warnings(calm, target_ops=None, achieved_ops=None, ncpu=2) == []
    assert client_bottleneck_warnings(calm, target_ops=1000, achieved_ops=900, ncpu=2) == []

    host = client_bottleneck_warnings({"host_cpu_pct": 95.0}, 0, 100, 8)
    assert len(host) == 1 and "host CPU" in host[0]
    proc = client_bottleneck_warnings({"host_cpu_pct": 50.0, "ycsb_cpu_core_pct": 370.0}, 0, 100, 4)
    assert len(proc) == 1 and "3.70 of 4 cores" in proc[0]
    assert client_bottleneck_warnings({"ycsb_cpu_core_pct": 350.0}, 0, 100, 4) == []  # 87.5% of 4 cores
    short = client_bottleneck_warnings(calm, target_ops=10000, achieved_ops=7000, ncpu=2)
    assert len(short) == 1 and "70% of -target 10000" in short[0]
    nan = client_bottleneck_warnings({"host_cpu_pct": float("nan")}, float("nan"), 1.0, None)
    assert nan == []
    both = client_bottleneck_warnings({"host_cpu_pct": 99.0, "ycsb_cpu_core_pct": 190.0}, 5000, 1000, 2)
    assert len(both) == 3


def test_descendants_are_looked_up_every_few_samples_and_counted_when_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A look-up of the tree reads every process's /proc entry, so it runs once every LOOKUP_EVERY samples;
    a child started between two look-ups has all its CPU counted from the next one on."""
    import ycsb_runner.monitors.client as client

    lookups = []
    real = client.descendants
    monkeypatch.setattr(client, "descendants", lambda p: lookups.append(1) or real(p))
    burn = (
        f"import sys, time\nwhile time.process_time() < {CHILD_CPU_S}: pass\n"
        "print('done', flush=True)\nsys.stdin.read()"
    )
    sampler = ClientSampler(pid=psutil.Process().pid, interval_s=60)
    first = sampler.sample_now()  # a look-up: no child yet
    child = subprocess.Popen(
        [sys.executable, "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "done"
        before = [sampler.sample_now() for _ in range(client.LOOKUP_EVERY - 1)]
        found = sampler.sample_now()  # the next look-up
    finally:
        child.kill()
        child.wait(timeout=10)
    assert first is not None and found is not None and all(s is not None for s in before)
    assert len(lookups) == 2
    assert before[-1].proc_cpu_s - first.proc_cpu_s < CHILD_CPU_S / 2  # not seen yet: this process waited
    assert found.proc_cpu_s - first.proc_cpu_s >= CHILD_CPU_S - 0.02

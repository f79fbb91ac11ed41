"""Remote telemetry: the /proc sampler loop, run here with sh, read as psutil reads this machine."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from ycsb_runner.execute.telemetry import BEGIN, END, parse_block, sampler_script
from ycsb_runner.monitors.client import client_summary, cpu_times_of

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux's")


def _blocks(workdir: Path, n: int) -> list[list[str]]:
    proc = subprocess.Popen(["sh", "-c", sampler_script(str(workdir), 0.3)], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    blocks, block = [], None
    try:
        for raw in proc.stdout:
            line = raw.decode().rstrip("\n")
            if line.startswith(BEGIN):
                block = [line]
            elif line == END and block:
                blocks.append(block)
                if len(blocks) == n:
                    break
            elif block is not None:
                block.append(line)
    finally:
        proc.kill()
        proc.wait()
    return blocks


def test_samples_match_psutil(tmp_path: Path) -> None:
    burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        (tmp_path / "pid").write_text(str(burner.pid))
        time.sleep(0.5)
        blocks = _blocks(tmp_path, 4)
        ref = psutil.Process(burner.pid)
        t = ref.cpu_times()
        ref_cpu, ref_rss = t.user + t.system, ref.memory_info().rss
    finally:
        burner.kill()
        burner.wait()
    samples = [parse_block(b, float(b[0].split()[1])) for b in blocks]  # mono: the sample's own clock
    last = samples[-1]
    assert len(last.per_core) == psutil.cpu_count()
    host = cpu_times_of(psutil.cpu_times())
    assert last.host.total == pytest.approx(host.total, rel=0.01)  # the same counters as psutil's
    assert last.proc_cpu_s == pytest.approx(ref_cpu, abs=0.5)
    assert last.proc_rss_bytes == pytest.approx(ref_rss, rel=0.2)
    net = psutil.net_io_counters()
    assert last.net_recv_bytes <= net.bytes_recv and last.net_recv_bytes >= 0.9 * net.bytes_recv
    vm = psutil.virtual_memory()
    assert last.mem_used_bytes == pytest.approx(vm.total - vm.available, rel=0.2)
    summary = client_summary(samples)
    assert summary["n_samples"] == 4
    # the busy loop ran while it was sampled (a share of one core: this machine's 2 cores are shared)
    assert summary["ycsb_cpu_core_pct"] > 5
    assert summary["ycsb_cpu_core_pct"] == pytest.approx(
        100 * (samples[-1].proc_cpu_s - samples[0].proc_cpu_s) / (samples[-1].t - samples[0].t)
    )


def test_a_sample_without_the_process_has_no_process_figures(tmp_path: Path) -> None:
    (blocks,) = [_blocks(tmp_path, 1)]  # no pid file: YCSB not started yet
    s = parse_block(blocks[0], 0.0)
    assert s.proc_cpu_s != s.proc_cpu_s  # NaN
    assert s.host.total > 0 and os.cpu_count() == len(s.per_core)

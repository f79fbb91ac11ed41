"""How much does ycsb-runner itself cost? Prints two figures (a script, not a test).

(a) The wrapper's own CPU while a YCSB run is going on (monitors on): user+sys CPU seconds of this Python
    process (children excluded) / wall seconds, as % of one core, over the run step. Target < 2 %.
(b) YCSB throughput of the same command run bare (the argv ycsb-runner rendered, from the manifest's
    steps[].argv, with the real URL in a private connection properties file) vs through ycsb-runner, in
    alternating pairs; the median of the per-pair ratios wrapper/bare.

Usage: .venv/bin/python bench/overhead_bench.py [--pairs 3] [--seconds 10] [--cpu-seconds 20]
It starts its own embedded server (FerretDB or mongod) and removes everything it wrote on exit.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.server import EmbeddedServer

SUITE = """name = "overhead"
estimated_throughput = 1000
[dataset]
recordcount = {records}
load_threads = 2
[run]
threads = [2]
operationcount = 1000000000
maxexecutiontime = {seconds}
status_interval = 1
[[mix]]
name = "read95_update5"
read = 0.95
update = 0.05
requestdistribution = "uniform"
"""
THROUGHPUT = re.compile(r"\[OVERALL\], Throughput\(ops/sec\), ([\d.]+)")


def write_suite(folder: Path, seconds: int, records: int) -> Path:
    path = folder / f"overhead-{seconds}s.toml"
    path.write_text(SUITE.format(seconds=seconds, records=records))
    return path


class CpuWindow:
    """Progress callback: this process's own CPU (threads included, children excluded) during run steps."""

    def __init__(self) -> None:
        self.me = psutil.Process()
        self.start: tuple[float, float] | None = None
        self.windows: list[tuple[float, float]] = []  # (cpu seconds, wall seconds)

    def _now(self) -> tuple[float, float]:
        t = self.me.cpu_times()
        return t.user + t.system, time.monotonic()

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        step = data.get("step")
        if step is None or step.kind != "run":
            return
        if event == "step-start":
            self.start = self._now()
        elif event == "step-end" and self.start is not None:
            cpu, wall = self._now()
            self.windows.append((cpu - self.start[0], wall - self.start[1]))
            self.start = None


def wrapper_run(url: str, suite: Path, results: Path, progress: Any = None) -> dict[str, Any]:
    """One suite through run_bench; the run step's manifest entry."""
    outcome = run_bench(
        BenchOptions(suite=str(suite), url=url, results=results, monitors=True, sample_interval_s=1.0),
        log=lambda _m: None,
        progress=progress,
    )
    return next(s for s in outcome.result.manifest.to_json()["steps"] if s["phase"] == "run")


def bare_run(argv: list[str], url: str, private: Path) -> float:
    """The rendered YCSB argv as is, the masked connection file swapped for one with the real URL."""
    conn = private / "connection.properties"
    conn.write_text(f"mongodb.url={url}\n")
    conn.chmod(0o600)
    args = [str(conn) if a.endswith("connection.properties") else a for a in argv]
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False)
    m = THROUGHPUT.search(done.stdout)
    if done.returncode != 0 or not m:
        raise SystemExit(f"bare YCSB run failed (exit {done.returncode}): {done.stderr[-500:]}")
    return float(m.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=10, help="length of each run in (b)")
    ap.add_argument("--cpu-seconds", type=int, default=20, help="length of the run in (a)")
    ap.add_argument("--records", type=int, default=1000)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="overhead-bench-"))
    private = work / "private"
    private.mkdir(mode=0o700)
    try:
        with EmbeddedServer(log=lambda _m: None) as server:
            print(
                f"server: {server.version}, {psutil.cpu_count()} logical CPUs, "
                f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
            )
            # (a) wrapper CPU during one run with monitors on
            cpu = CpuWindow()
            cpu_suite = write_suite(work, args.cpu_seconds, args.records)
            step = wrapper_run(server.url, cpu_suite, work / "res", cpu)
            ((cpu_s, wall_s),) = cpu.windows
            print(
                f"(a) wrapper CPU during a {args.cpu_seconds} s run (monitors on, sampling 1 s): "
                f"{cpu_s:.2f} s CPU / {wall_s:.1f} s wall = {100 * cpu_s / wall_s:.2f} % of one core "
                f"(target < 2 %); YCSB throughput {step['throughput_ops_s']:.0f} ops/s"
            )
            # (b) bare vs wrapper, alternating pairs (the order inside a pair alternates too)
            suite = write_suite(work, args.seconds, args.records)
            ratios = []
            for i in range(args.pairs):
                order = ("wrapper", "bare") if i % 2 == 0 else ("bare", "wrapper")
                got: dict[str, float] = {}
                argv: list[str] = step["argv"]
                for who in order:
                    if who == "wrapper":
                        run = wrapper_run(server.url, suite, work / "res")
                        argv = run["argv"]
                        got[who] = run["throughput_ops_s"]
                    else:
                        got[who] = bare_run(argv, server.url, private)
                ratios.append(got["wrapper"] / got["bare"])
                print(
                    f"(b) pair {i + 1} ({' then '.join(order)}): wrapper {got['wrapper']:.0f} ops/s, "
                    f"bare {got['bare']:.0f} ops/s, ratio {ratios[-1]:.3f}"
                )
            print(
                f"(b) median ratio wrapper/bare over {len(ratios)} pairs of {args.seconds} s runs: "
                f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

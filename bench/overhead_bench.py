"""Does ycsb-runner perturb what it measures? Prints its figures (a script, not a test).

(a) The wrapper's own CPU while a YCSB run goes on (monitors on): user+sys CPU seconds of this Python
    process (children excluded) / wall seconds, as % of one core, over the run step. Target < 1 %.
(b) YCSB throughput through ycsb-runner (``run_bench``, the run step of a load+run suite) against the same
    run step started bare (the argv ycsb-runner rendered, from the manifest, with a private connection file
    holding the real URL), in ABBA blocks: wrapper, bare, bare, wrapper, then bare, wrapper, wrapper, bare,
    and so on. Each run gives two throughputs: YCSB's overall figure, and the steady one (operations between
    its status line at 2 s and its last, over their millisecond timestamps), which leaves out the JVM's
    first seconds (class loading, JIT; the same argv either way) where the run-to-run spread is largest.
    A block's ratio is the geometric mean of its two wrapper runs over its two bare runs, which cancels an
    order effect that grows linearly within the block (the second run of a pair was ~30 % faster on the
    embedded server, whichever it was). The figure is the mean log ratio over the blocks with its
    95 % t interval, exponentiated, for each throughput. Target: the interval holds 1.00 and its lower end is
    >= 0.99.

    Four set-ups: YCSB's no-op BasicDB (client-bound, nothing reaches the server) and the embedded server at a
    fixed ``-target`` (half of what a bare unthrottled run of the same mix reached), each with the monitors on
    and off; and ``basic-on-x10`` (``--only`` it), BasicDB with the monitors sampling ten times a second:
    ten times their cost, so that a cost too small to see at +-2 % shows. The first wrapper run of each
    set-up is a warm-up (not counted).

    ``--pin-cpu N`` runs the BasicDB set-ups with this script, its threads (the wrapper's samplers and pipe
    readers) and every YCSB JVM it starts, wrapper or bare, on CPU N (the server stays free): the wrapper's
    every cycle is then taken from YCSB's, the harshest case. Five bare 8 s runs in a row varied less pinned
    (coefficient of variation 2.1-2.9 %, 4.7-5.7 % free), but the blocks did not: at the spread of 30
    pinned blocks +-1 % needs about 98-121, at that of 16 free ones 66-68 (2 Dec 2026): off by default.
    Longer runs (3 Dec 2026, steady throughput): pinned, 50 blocks each, basic-on 0.9886 [0.9712, 1.0062]
    and basic-off 0.9888 [0.9744, 1.0034]; free, 60 blocks each, basic-on 0.9929 [0.9798, 1.0062] and
    basic-off 0.9907 [0.9795, 1.0021]: +-1 % needs 79-151 blocks. Monitors on and off alike; the four runs
    pooled (inverse variance) give 0.9906 [0.9839, 0.9972]: the wrapper itself, not its monitors, seems to
    cost about 1 % of a client-bound JVM.
    Then (3 Dec 2026, later) the wrapper stopped polling for YCSB's exit every 50 ms (its CPU during a BasicDB
    run: 0.23 -> 0.03 % of a core, monitors off), and every counted run starts after ``--pause-s`` (2 s) idle.
    Pinned, 55 blocks each, CPU 0 busy with other benchmarks: basic-on 0.9969 [0.9766, 1.0177], basic-off
    1.0014 [0.9850, 1.0181]; pooled 0.9997 [0.9869, 1.0126]: centred on 1.00, and +-1 % would need 148-228
    blocks at that spread.
    ABBA cancels a linear trend but not a carry-over: a bare run follows a wrapper run three times in four,
    and a wrapper run a bare one. The line "with the run before as a factor" fits log throughput on both
    (positions and blocks too). The carry-over came out x1.0081, x1.0085, x1.0134, x0.9903, x1.0177, x0.9877
    over the six long set-ups: not one sign, none outside its noise; the wrapper's factor so fitted, pooled
    over the six, 0.9946 [0.9876, 1.0017]. The spread varies from day to day: free, 50 blocks of basic-on
    late on 3 Dec gave a per-run spread of 35 % (4.6 % the day before) and 0.9689 [0.8934, 1.0509]; check it
    with a few blocks before a long run.
    The morning of 3 Dec 2026 (nothing else running) it was worse. Free, the two YCSB threads on two CPUs gave
    a bimodal steady throughput (2.4-8.1 M ops/s; one thread alone reaches the fast mode), 10 basic-off
    blocks ranged 0.53-1.75 (+-1 % would need about 3900 blocks). Pinned, 12 s runs with
    ``--steady-from-s 5`` (on one CPU the JIT's warm-up takes 4-5 s), 6 basic-on blocks ranged 0.94-1.10
    (sd 5.5 %: about 120 blocks). The host set that spread: a pure Python loop pinned to one CPU took
    2.80-4.76 s per 5 s chunk (CV 15 %) and 0.83-1.34 s per 1 s chunk; longer runs did not help (25 s runs
    pinned, CV 6.4 %), nor did another collector (SerialGC, fixed heap), nor a concurrent reference (two
    JVMs at once on the two CPUs: their ratio's sd 5.3 %, the CPUs' speeds barely move together).
    An hour later the loop's CV was 1 % and five pinned bare runs 1.5 %, but not for long: pinned, 10 s runs,
    ``--steady-from-s 5``, 22 blocks each, basic-on 1.0009 [0.9768, 1.0257] and basic-off 1.0038
    [0.9771, 1.0311] (block ratios 0.84-1.10; +-1 % would need 121-146 blocks, about 2 h a set-up).

    ``--side-by-side`` takes the host out of the ratio. The BasicDB set-ups then run each pair's two runs at
    the same time on one CPU, the wrapper run (this script, its threads and its JVM) in one cgroup and the
    bare JVM in another with the same CPU weight: each gets half of the CPU whatever the host's speed does
    meanwhile, and whatever the wrapper spends besides its JVM comes out of its own half (twice its share of
    a whole CPU: a harsher test than the runs above). A pair's ratio is the two steady rates over the
    seconds both ran; the second run starts 0.5 s after the first, the bare one first in half the pairs, and
    the cgroups swap every other pair. The same number of bare/bare pairs first checks the method: its ratio
    must hold 1.00. 3 Dec 2026, 10 s runs, ``--steady-from-s 5 --threads 1``, 30 pairs each (host speed
    CV 9-12 % that morning): bare/bare 1.0012 [0.9827, 1.0200] (one pair at 1.27: a JVM whose steady rate
    was 20 % below its usual), basic-on 0.9972 [0.9888, 1.0057], basic-off 1.0062 [0.9984, 1.0142]; per
    pair sd 2.3 %. Then 15 s runs, 40 pairs each: bare/bare 0.9930 [0.9849, 1.0011], basic-on 0.9979
    [0.9882, 1.0078], basic-off 0.9970 [0.9893, 1.0047]: the wrapper's ratios as close to 1.00 as the
    method's own check, and the per-pair spread (2.5-3 %) no smaller for the longer runs, nor with the JIT's
    C1 compiler only (``JAVA_TOOL_OPTIONS=-XX:TieredStopAtLevel=1``, 10 pairs each): +-0.5 % needs about
    100 pairs (``--check-pairs`` sets the bare/bare pairs apart from ``--blocks``). 100 pairs of 10 s
    (20 bare/bare first: 0.9925 [0.9788, 1.0065]): basic-on 0.9937 [0.9895, 0.9979], a cost of 0.2-1.05 %
    of the half CPU. The client sampler's look-up of YCSB's descendants took 1.2 ms a sample (psutil reads
    every /proc entry); once it looked every 10th sample, basic-on 0.9954 [0.9911, 0.9997] (100 pairs): the
    lower end over 0.99, 1.00 just outside. The wrapper's own CPU during a 10 s BasicDB run (``CpuWindow``,
    10 ms ticks): 20-40 ms with the monitors on, 10 ms off. Per thread (``/proc/self/task/*/schedstat``,
    13 s of a 20 s run, three runs): the server sampler 12.2-12.9 ms, the client sampler 11.3-12.7 ms,
    pymongo's two threads 4-7 ms, YCSB's stderr reader 2.5 ms (the one thread running with the monitors
    off): 2.3-2.6 ms a second, 0.25 % of a core, 0.5 % of the half CPU: what basic-on lost. Both samplers
    in one thread cost as much (the work, not the wake-ups).
    ``--wrapper-apart`` asks what is left besides that CPU: this script (the wrapper's Python) runs on the
    other CPUs and only its JVM shares the pair's CPU with the bare one (each JVM moved into its cgroup and
    onto the CPU, every thread of it, as soon as it is there). 3 Dec 2026, 10 s runs, ``--steady-from-s 5
    --threads 1``: bare/bare 0.9844 [0.9645, 1.0046] (20 pairs), basic-on 1.0011 [0.9946, 1.0076] and
    basic-off 0.9978 [0.9922, 1.0035] (100 pairs each, per-pair sd 3.3 %): the wrapper does nothing to
    YCSB but take the 0.25 % of a core that its samplers use, which (a) reports.

Usage: .venv/bin/python bench/overhead_bench.py [--blocks 6] [--seconds 10] [--only basic-on ...]
        [--side-by-side [--wrapper-apart]] [--pin-cpu N] [--threads 1] [--steady-from-s 5]
It starts its own embedded server (FerretDB or mongod) and removes everything it wrote on exit.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import psutil

from ycsb_runner.analyse.stats import summarize
from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.execute.probe import BASIC_DB
from ycsb_runner.install.embedded import EmbeddedServer
from ycsb_runner.parse import parse_output
from ycsb_runner.runs.model import STDERR

SUITE = """name = "overhead"
estimated_throughput = 1000
[dataset]
recordcount = {records}
load_threads = 2
[run]
threads = [{threads}]
target = {target}
operationcount = 1000000000
maxexecutiontime = {seconds}
status_interval = 1
[[mix]]
name = "read95_update5"
read = 0.95
update = 0.05
requestdistribution = "uniform"
{properties}"""
BASIC_PROPERTIES = '[properties]\n"basicdb.verbose" = "false"\n"basicdb.simulatedelay" = "0"\n'
THROUGHPUT = re.compile(r"\[OVERALL\], Throughput\(ops/sec\), ([\d.]+)")
STEADY_FROM_S = 2
LAG_S = 0.5  # side by side: the second run of a pair starts this long after the first
KINDS = ("steady", "overall")
# wrapper first in even blocks, bare first in odd ones: A B B A, then B A A B
ORDERS = (("wrapper", "bare", "bare", "wrapper"), ("bare", "wrapper", "wrapper", "bare"))


@dataclass(frozen=True)
class Setup:
    name: str
    basic: bool  # YCSB's BasicDB, else the embedded server at a fixed target
    monitors: bool
    sample_interval_s: float = 1.0  # the monitors' (a tenth of it: ten times their cost, to see it)


SETUPS = (
    Setup("basic-on", basic=True, monitors=True),
    Setup("basic-off", basic=True, monitors=False),
    Setup("basic-on-x10", basic=True, monitors=True, sample_interval_s=0.1),
    Setup("server-on", basic=False, monitors=True),
    Setup("server-off", basic=False, monitors=False),
)


def _status_lines(stderr: str, from_s: int) -> tuple[pd.Series, pd.Series]:
    """The times and total operations of YCSB's status lines from *from_s* seconds on (as
    ``ycsb_runner.parse`` reads them; times from their millisecond timestamps)."""
    status = parse_output(b"", stderr).status.drop_duplicates("status_index")
    kept = status[status["elapsed_s"] >= from_s]
    times = pd.to_datetime(kept["timestamp"], format="mixed").reset_index(drop=True)
    return times, kept["total_ops"].reset_index(drop=True)


def _rate(times: pd.Series, ops: pd.Series, why: str) -> float:
    if len(times) < 2 or times.iloc[-1] <= times.iloc[0]:
        raise ValueError(f"fewer than two status lines {why}: run longer (--seconds)")
    return float(ops.iloc[-1] - ops.iloc[0]) / (times.iloc[-1] - times.iloc[0]).total_seconds()


def steady_rate(stderr: str, from_s: int = STEADY_FROM_S) -> float:
    """Operations per second between the first status line at *from_s* seconds or later and the last one,
    timed by their millisecond timestamps."""
    return _rate(*_status_lines(stderr, from_s), f"from {from_s} s on")


def common_rates(a: str, b: str, from_s: int = STEADY_FROM_S) -> tuple[float, float]:
    """The steady rates of two runs that ran at the same time, each over its status lines within the span
    where both were past *from_s* seconds and neither had ended: the same stretch of the host's time."""
    (ta, oa), (tb, ob) = _status_lines(a, from_s), _status_lines(b, from_s)
    if ta.empty or tb.empty:
        raise ValueError(f"a run has no status line from {from_s} s on: run longer (--seconds)")
    lo, hi = max(ta.iloc[0], tb.iloc[0]), min(ta.iloc[-1], tb.iloc[-1])
    why = "while both ran"
    return (
        _rate(ta[(ta >= lo) & (ta <= hi)], oa[(ta >= lo) & (ta <= hi)], why),
        _rate(tb[(tb >= lo) & (tb <= hi)], ob[(tb >= lo) & (tb <= hi)], why),
    )


def block_log_ratio(order: tuple[str, ...], throughputs: list[float]) -> float:
    """ln(wrapper/bare) of one ABBA block: the mean log throughput of its wrapper runs minus its bare runs."""
    logs: dict[str, list[float]] = {"wrapper": [], "bare": []}
    for who, ops_s in zip(order, throughputs, strict=True):
        logs[who].append(math.log(ops_s))
    return sum(logs["wrapper"]) / len(logs["wrapper"]) - sum(logs["bare"]) / len(logs["bare"])


def ratio_interval(log_ratios: list[float]) -> tuple[float, float, float]:
    """exp of the mean log ratio and of its 95 % t interval over the blocks."""
    s = summarize(log_ratios)
    return math.exp(s["mean"]), math.exp(s["ci_low"]), math.exp(s["ci_high"])


def blocks_for(log_ratios: list[float], half_width: float = 0.01) -> int:
    """About how many blocks a 95 % t interval of +-*half_width* needs at the blocks' spread: the smallest
    n whose t quantile (n - 1 degrees of freedom) times sd / sqrt(n) is within it."""
    from scipy.stats import t

    sd = summarize(log_ratios)["stdev"]
    n = 2
    while t.ppf(0.975, n - 1) * sd / math.sqrt(n) > math.log1p(half_width):
        n += 1
    return n


def summary(log_ratios: list[float], unit: str = "blocks") -> str:
    """The ratio, its interval and the verdict: meets the target (an interval within +-1 % that holds 1.00
    and whose lower end is >= 0.99), does not meet it (an interval within +-1 % that misses), or too wide
    to tell, with what its lower end does rule out."""
    mid, low, high = ratio_interval(log_ratios)
    if len(log_ratios) < 2:
        one = unit[:-1]
        return f"wrapper/bare {mid:.4f} over 1 {one}: no interval from one {one} (--blocks 2 or more)"
    narrow = math.log(high / low) / 2 <= math.log1p(0.01) + 1e-12
    if narrow and low <= 1.0 <= high and low >= 0.99:
        verdict = "meets the target (+-1 %, holds 1.00, lower end >= 0.99)"
    elif narrow:
        verdict = "does not meet the target (+-1 %, holds 1.00, lower end >= 0.99)"
    else:
        verdict = f"too wide to tell (+-1 % would need about {blocks_for(log_ratios)} {unit} at this spread)"
        if high < 1.0:
            verdict += f"; it excludes 1.00: the wrapper costs {100 * (1 - high):.1f}-{100 * (1 - low):.1f} %"
        elif low >= 0.99:
            verdict += "; its lower end rules out a cost over 1 %"
    interval = f"95 % interval [{low:.4f}, {high:.4f}]"
    return f"wrapper/bare {mid:.4f}, {interval} over {len(log_ratios)} {unit}: {verdict}"


@dataclass(frozen=True)
class Run:
    block: int
    position: int  # 0-3 in its block
    who: str  # "wrapper" or "bare"
    before: str  # who ran just before it (the warm-up is a wrapper run)
    steady: float  # ops/s


def carryover_adjusted(runs: list[Run]) -> tuple[float, float, float, float]:
    """The wrapper's effect on steady throughput with the run before it as a second factor: least squares of
    log throughput on wrapper (0/1), previous run a wrapper run (0/1), position in the block and one level
    per block. In the ABBA blocks a bare run follows a wrapper run three times in four and a wrapper run a
    bare one three times in four, so the block ratio mixes any carry-over (a run after a wrapper run faster
    or slower, for whatever reason) into the wrapper's effect; this separates them. Returns the wrapper factor
    and its 95 % t interval (exp of the log coefficients) and the carry-over factor."""
    import numpy as np
    from scipy.stats import t

    blocks = sorted({r.block for r in runs})
    x = np.array(
        [
            [r.who == "wrapper", r.before == "wrapper"]
            + [r.position == p for p in (1, 2, 3)]
            + [r.block == b for b in blocks]
            for r in runs
        ],
        dtype=float,
    )
    y = np.log([r.steady for r in runs])
    beta, *_ = np.linalg.lstsq(x, y, rcond=None)
    dof = len(y) - np.linalg.matrix_rank(x)
    residual = y - x @ beta
    se = math.sqrt(float(residual @ residual) / dof * np.linalg.pinv(x.T @ x)[0, 0])
    half = t.ppf(0.975, dof) * se
    return math.exp(beta[0]), math.exp(beta[0] - half), math.exp(beta[0] + half), math.exp(beta[1])


def write_suite(folder: Path, *, seconds: int, records: int, threads: int, target: int, basic: bool) -> Path:
    path = folder / f"overhead-{seconds}s-{threads}t-{target}-{'basic' if basic else 'server'}.toml"
    path.write_text(
        SUITE.format(
            seconds=seconds,
            records=records,
            threads=threads,
            target=target,
            properties=BASIC_PROPERTIES if basic else "",
        )
    )
    return path


class CpuWindow:
    """Progress callback: this process's own CPU (threads included, children excluded) while YCSB runs a run
    step, from its first status line to its last: neither the JVM's start nor the parsing after its exit,
    which cannot slow YCSB down, counts."""

    def __init__(self) -> None:
        self.me = psutil.Process()
        self.first: tuple[float, float] | None = None
        self.last: tuple[float, float] | None = None
        self.windows: list[tuple[float, float]] = []  # (cpu seconds, wall seconds)

    def _now(self) -> tuple[float, float]:
        t = self.me.cpu_times()
        return t.user + t.system, time.monotonic()

    def __call__(self, event: str, data: dict[str, Any]) -> None:
        step = data.get("step")
        if step is None or step.kind != "run":
            return
        if event == "status":
            now = self._now()
            self.first = self.first or now
            self.last = now
        elif event == "step-end" and self.first is not None and self.last is not None:
            self.windows.append((self.last[0] - self.first[0], self.last[1] - self.first[1]))
            self.first = self.last = None


def wrapper_run(
    url: str,
    suite: Path,
    results: Path,
    *,
    basic: bool,
    monitors: bool,
    progress: Any = None,
    sample_interval_s: float = 1.0,
) -> tuple[dict[str, Any], str]:
    """One suite through run_bench: the run step's manifest entry and its ``stderr.txt``."""
    outcome = run_bench(
        BenchOptions(
            suite=str(suite),
            url=url,
            results=results,
            monitors=monitors,
            sample_interval_s=sample_interval_s,
            report=False,
            history=False,
            binding_class=BASIC_DB if basic else None,
        ),
        log=lambda _m: None,
        progress=progress,
    )
    step = next(s for s in outcome.result.manifest.to_json()["steps"] if s["phase"] == "run")
    return step, (outcome.result.step_path(step["step"]) / STDERR).read_text()


def bare_argv(argv: list[str], url: str, private: Path) -> list[str]:
    """The rendered YCSB argv with the masked connection file swapped for a private one holding *url*."""
    conn = private / "connection.properties"
    conn.write_text(f"mongodb.url={url}\n")
    conn.chmod(0o600)
    return [str(conn) if a.endswith("connection.properties") else a for a in argv]


def bare_run(
    argv: list[str], url: str, private: Path, steady_from_s: int = STEADY_FROM_S
) -> dict[str, float]:
    """The rendered YCSB argv as is, the masked connection file swapped for one with the real URL."""
    args = bare_argv(argv, url, private)
    # the workload file (-P) is the warm-up run's, in its run folder: its HDR logs are overwritten
    done = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False, cwd=private)
    m = THROUGHPUT.search(done.stdout)
    if done.returncode != 0 or not m:
        raise SystemExit(f"bare YCSB run failed (exit {done.returncode}): {done.stderr[-500:]}")
    return {"overall": float(m.group(1)), "steady": steady_rate(done.stderr, steady_from_s)}


def setup_run(url: str, suite: Path, results: Path, setup: Setup) -> tuple[dict[str, Any], str]:
    """One wrapper run as *setup* has it (monitors, sampling interval, binding)."""
    return wrapper_run(
        url,
        suite,
        results,
        basic=setup.basic,
        monitors=setup.monitors,
        sample_interval_s=setup.sample_interval_s,
    )


def wrapper_rates(
    url: str, suite: Path, results: Path, setup: Setup, steady_from_s: int = STEADY_FROM_S
) -> dict[str, float]:
    step, stderr = setup_run(url, suite, results, setup)
    return {"overall": step["throughput_ops_s"], "steady": steady_rate(stderr, steady_from_s)}


def measure_setup(
    setup: Setup,
    *,
    url: str,
    suite: Path,
    work: Path,
    private: Path,
    blocks: int,
    pause_s: float,
    say: Callable[[str], None],
    steady_from_s: int = STEADY_FROM_S,
) -> tuple[dict[str, list[float]], list[Run]]:
    """The log ratio wrapper/bare of each block, for each throughput (KINDS), and every counted run."""
    warm, _ = setup_run(url, suite, work / "res", setup)
    argv: list[str] = warm["argv"]  # the warm-up run is not counted; it gives the argv of the bare runs
    log_ratios: dict[str, list[float]] = {kind: [] for kind in KINDS}
    runs: list[Run] = []
    before = "wrapper"  # the warm-up
    for i in range(blocks):
        order = ORDERS[i % 2]
        got = []
        for position, who in enumerate(order):
            time.sleep(pause_s)  # every JVM starts after the same idle time, whatever ran before it
            rates = (
                wrapper_rates(url, suite, work / "res", setup, steady_from_s)
                if who == "wrapper"
                else bare_run(argv, url, private, steady_from_s)
            )
            got.append(rates)
            runs.append(Run(i, position, who, before, rates["steady"]))
            before = who
        for kind in KINDS:
            log_ratios[kind].append(block_log_ratio(order, [run[kind] for run in got]))
        shown = ", ".join(
            f"{who[0].upper()} {run['steady']:.0f}" for who, run in zip(order, got, strict=True)
        )
        say(
            f"  block {i + 1}: steady {shown} ops/s -> ratio {math.exp(log_ratios['steady'][-1]):.4f} "
            f"(overall {math.exp(log_ratios['overall'][-1]):.4f})"
        )
    return log_ratios, runs


class CpuGroups:
    """Two cgroups with the same CPU weight, for two processes that share one CPU half and half: whatever
    one of them spends besides its JVM (the wrapper's threads) comes out of its own half. Needs root and
    the cgroup ``cpu`` controller (v1, or v2 with ``cpu`` enabled at the root); removed on exit."""

    V1 = Path("/sys/fs/cgroup/cpu")
    V2 = Path("/sys/fs/cgroup")

    def __init__(self, names: tuple[str, ...] = ("x", "y"), *, apart_cpu: int | None = None) -> None:
        self.apart_cpu = apart_cpu  # set: this process stays off it, each JVM is placed on it on its own
        if (self.V1 / "cpu.shares").exists():
            root = self.V1
        elif "cpu" in _read(self.V2 / "cgroup.controllers").split():
            root = self.V2
            if "cpu" not in _read(root / "cgroup.subtree_control").split():
                _write(root / "cgroup.subtree_control", "+cpu")
        else:
            raise SystemExit("--side-by-side needs the cgroup cpu controller (/sys/fs/cgroup/cpu or cgroup2)")
        self.root = root
        self.paths = {n: root / f"ycsb-overhead-{os.getpid()}-{n}" for n in names}

    def __enter__(self) -> CpuGroups:
        try:
            for path in self.paths.values():
                path.mkdir()
        except OSError as err:
            self.__exit__()
            raise SystemExit(
                f"--side-by-side: cannot make a cgroup ({err.strerror}): run it as root"
            ) from None
        return self

    def join(self, name: str, pid: int = 0) -> None:
        """Move process *pid* (0: this one, with its threads; its children to come follow it) into *name*."""
        _write(self.paths[name] / "cgroup.procs", str(pid or os.getpid()))

    def pin(self, pid: int) -> None:
        """With ``apart_cpu``: every thread of JVM *pid* onto that CPU, again after 0.3 and 2 s for the
        threads a JVM starts meanwhile (a thread inherits its creator's CPUs). Takes 2 s: call it in a
        thread."""
        if self.apart_cpu is None:
            return
        for delay in (0.0, 0.3, 1.7):
            time.sleep(delay)
            for task in Path(f"/proc/{pid}/task").glob("*"):
                with contextlib.suppress(OSError):
                    os.sched_setaffinity(int(task.name), {self.apart_cpu})

    def __exit__(self, *_exc: object) -> None:
        _write(self.root / "cgroup.procs", str(os.getpid()))
        for path in self.paths.values():
            for _ in range(50):  # a JVM that just exited may still be listed for a moment
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.1)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def side_by_side(
    setup: Setup | None,
    *,
    url: str,
    suite: Path,
    work: Path,
    private: Path,
    argv: list[str],
    groups: CpuGroups,
    swap: bool,
    bare_first: bool,
    steady_from_s: int,
) -> tuple[float, float]:
    """One pair run at the same time on the same CPU, each side in its own cgroup (*swap*: the other way
    round): a run through the wrapper (*setup*; None: a second bare run, the method's own check) and a bare
    run, one started LAG_S after the other (*bare_first*: the bare one first). Their steady rates over the
    seconds both ran (wrapper, bare)."""
    side, other = ("y", "x") if swap else ("x", "y")
    args = bare_argv(argv, url, private)
    started: dict[str, subprocess.Popen[bytes]] = {}

    def start(name: str) -> None:
        with (private / f"bare-{name}.stderr").open("wb") as out:
            proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=out, cwd=private)
        groups.join(name, proc.pid)  # (its first milliseconds, the JVM's start, in the other group)
        threading.Thread(target=groups.pin, args=(proc.pid,), daemon=True).start()
        started[name] = proc

    def first_then_second() -> None:  # the wrapper's JVM starts when this returns (A/A: "side" does)
        if bare_first:
            start(other)
            time.sleep(LAG_S)
        else:
            threading.Timer(LAG_S, start, (other,)).start()

    def progress(event: str, data: dict[str, Any]) -> None:
        step = data.get("step")
        if event == "step-start" and step is not None and step.kind == "run":
            first_then_second()
            if groups.apart_cpu is not None:
                threading.Thread(target=place_wrapper_jvm, daemon=True).start()

    placed: list[int] = []

    def place_wrapper_jvm() -> None:  # --wrapper-apart: the wrapper's JVM, once it is there (4 s at most)
        for _ in range(200):
            for child in psutil.Process().children():
                with contextlib.suppress(psutil.Error):
                    if child.name() == "java" and str(private) not in " ".join(child.cmdline()):
                        groups.join(side, child.pid)
                        placed.append(child.pid)
                        groups.pin(child.pid)
                        return
            time.sleep(0.02)

    if groups.apart_cpu is None:
        groups.join(side)  # this process, its threads and the JVMs it starts
    try:
        if setup is None:  # A/A: two bare runs
            first_then_second()
            start(side)
            started[side].wait(timeout=600)
            mine = (private / f"bare-{side}.stderr").read_text()
        else:
            _, mine = wrapper_run(
                url,
                suite,
                work / "res",
                basic=setup.basic,
                monitors=setup.monitors,
                sample_interval_s=setup.sample_interval_s,
                progress=progress,
            )
    finally:
        time.sleep(LAG_S)  # the timer's start, if it has not come yet
        for proc in started.values():
            proc.wait(timeout=600)
    if groups.apart_cpu is not None and setup is not None and not placed:
        raise SystemExit("--wrapper-apart: the wrapper's JVM was not found within 4 s of its step's start")
    for name, proc in started.items():
        if proc.returncode != 0:
            tail = (private / f"bare-{name}.stderr").read_text()[-500:]
            raise SystemExit(f"bare YCSB run failed (exit {proc.returncode}): {tail}")
    return common_rates(mine, (private / f"bare-{other}.stderr").read_text(), steady_from_s)


def measure_side_by_side(
    setup: Setup | None,
    *,
    url: str,
    suite: Path,
    work: Path,
    private: Path,
    groups: CpuGroups,
    pairs: int,
    pause_s: float,
    say: Callable[[str], None],
    steady_from_s: int,
) -> list[float]:
    """The log ratio wrapper/bare (None: bare/bare) of each pair run side by side, the cgroups swapped
    every other pair."""
    warm, _ = wrapper_run(url, suite, work / "res", basic=True, monitors=False)  # its argv; not counted
    log_ratios = []
    for i in range(pairs):
        time.sleep(pause_s)
        mine, bare = side_by_side(
            setup,
            url=url,
            suite=suite,
            work=work,
            private=private,
            argv=warm["argv"],
            groups=groups,
            swap=bool(i % 2),
            bare_first=not (i // 2) % 2,
            steady_from_s=steady_from_s,
        )
        log_ratios.append(math.log(mine / bare))
        who = "W" if setup else "B"
        say(f"  pair {i + 1}: steady {who} {mine:.0f}, B {bare:.0f} ops/s -> ratio {mine / bare:.4f}")
    return log_ratios


def run_side_by_side(
    setup: Setup | None,
    args: argparse.Namespace,
    url: str,
    suite: Path,
    work: Path,
    private: Path,
    groups: CpuGroups,
    say: Callable[[str], None],
) -> None:
    """Measure and print one set-up side by side (None: the bare/bare check)."""
    name = setup.name if setup else "bare/bare (the method's own check)"
    pairs = args.check_pairs if setup is None and args.check_pairs > 0 else args.blocks
    where = f"CPU {sorted(os.sched_getaffinity(0))[0]}"
    if groups.apart_cpu is not None:
        where = f"CPU {groups.apart_cpu}, the wrapper's Python on CPU {sorted(os.sched_getaffinity(0))}"
    say(f"(b) {name}: {pairs} pairs side by side, {args.seconds} s runs, {where}")
    log_ratios = measure_side_by_side(
        setup,
        url=url,
        suite=suite,
        work=work,
        private=private,
        groups=groups,
        pairs=pairs,
        pause_s=args.pause_s,
        say=say,
        steady_from_s=args.steady_from_s,
    )
    say(f"(b) {name}, side by side: {summary(log_ratios, 'pairs')}")


def bare_rate(url: str, suite: Path, work: Path, private: Path) -> float:
    """What the bare run step reaches unthrottled (one wrapper run gives its argv, then one bare run)."""
    step, _ = wrapper_run(url, suite, work / "res", basic=False, monitors=False)
    return bare_run(step["argv"], url, private)["steady"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--blocks", type=int, default=6, help="ABBA blocks per set-up (4 runs each)")
    ap.add_argument("--seconds", type=int, default=10, help="length of each run in (b)")
    ap.add_argument("--cpu-seconds", type=int, default=20, help="length of the run in (a)")
    ap.add_argument(
        "--pause-s", type=float, default=2.0, help="idle seconds before every counted run (default 2)"
    )
    ap.add_argument(
        "--steady-from-s",
        type=int,
        default=STEADY_FROM_S,
        help=f"the steady throughput starts at the status line of this second (default {STEADY_FROM_S})",
    )
    ap.add_argument("--records", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument(
        "--target", type=int, default=0, help="the server set-ups' target (0: half the bare rate)"
    )
    ap.add_argument(
        "--pin-cpu",
        type=int,
        default=-1,
        help="run the BasicDB set-ups (this script, its threads and every YCSB it starts) on this one CPU "
        "(default -1: not pinned)",
    )
    ap.add_argument(
        "--side-by-side",
        action="store_true",
        help="BasicDB set-ups: each pair's wrapper run and bare run at the same time on one CPU (--pin-cpu, "
        "default the last), half of it each (two cgroups; root), after as many bare/bare pairs; the "
        "server set-ups as ABBA blocks",
    )
    ap.add_argument(
        "--wrapper-apart",
        action="store_true",
        help="--side-by-side: this script (the wrapper's Python: its samplers, pipe readers) on the other "
        "CPUs, only its JVM beside the bare one: what the wrapper does to YCSB besides taking CPU, whose "
        "share (a) prints",
    )
    ap.add_argument(
        "--check-pairs",
        type=int,
        default=-1,
        help="--side-by-side: bare/bare pairs before the set-ups (default: --blocks)",
    )
    ap.add_argument("--only", action="append", choices=[s.name for s in SETUPS], help="these set-ups only")
    args = ap.parse_args()
    say = lambda line: print(line, flush=True)  # noqa: E731
    work = Path(tempfile.mkdtemp(prefix="overhead-bench-"))
    private = work / "private"
    private.mkdir(mode=0o700)
    sizes = dict(records=args.records, threads=args.threads)
    every_cpu = os.sched_getaffinity(0)
    try:
        with EmbeddedServer(log=lambda _m: None) as server:
            say(
                f"server: {server.version}, {psutil.cpu_count()} logical CPUs, "
                f"load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}"
            )
            if not args.only:  # (a) wrapper CPU during one run with monitors on
                cpu = CpuWindow()
                cpu_suite = write_suite(work, seconds=args.cpu_seconds, target=0, basic=False, **sizes)
                step, _ = wrapper_run(
                    server.url, cpu_suite, work / "res", basic=False, monitors=True, progress=cpu
                )
                ((cpu_s, wall_s),) = cpu.windows
                say(
                    f"(a) wrapper CPU while YCSB ran a {args.cpu_seconds} s run (first to last status "
                    "line; monitors on, sampling 1 s): "
                    f"{cpu_s:.2f} s CPU / {wall_s:.1f} s wall = {100 * cpu_s / wall_s:.2f} % of one core "
                    f"(target < 1 %); YCSB throughput {step['throughput_ops_s']:.0f} ops/s"
                )
            target = args.target
            chosen = [s for s in SETUPS if (s.name in args.only if args.only else s.sample_interval_s == 1.0)]
            if not target and any(not s.basic for s in chosen):
                free = write_suite(work, seconds=args.seconds, target=0, basic=False, **sizes)
                rate = bare_rate(server.url, free, work, private)
                target = max(1, int(rate / 2))
                say(f"(b) bare unthrottled rate {rate:.0f} ops/s: the server set-ups run at -target {target}")
            if args.side_by_side and any(s.basic for s in chosen):
                cpu = args.pin_cpu if args.pin_cpu >= 0 else max(every_cpu)
                os.sched_setaffinity(0, (every_cpu - {cpu}) if args.wrapper_apart else {cpu})
                suite = write_suite(work, seconds=args.seconds, target=0, basic=True, **sizes)
                with CpuGroups(apart_cpu=cpu if args.wrapper_apart else None) as groups:
                    check = [None] if args.check_pairs != 0 else []
                    for setup in [*check, *(s for s in chosen if s.basic)]:
                        run_side_by_side(setup, args, server.url, suite, work, private, groups, say)
                chosen = [s for s in chosen if not s.basic]
            for setup in chosen:
                suite = write_suite(
                    work,
                    seconds=args.seconds,
                    target=0 if setup.basic else target,
                    basic=setup.basic,
                    **sizes,
                )
                pinned = setup.basic and args.pin_cpu >= 0
                os.sched_setaffinity(0, {args.pin_cpu} if pinned else every_cpu)
                where = f", all on CPU {args.pin_cpu}" if pinned else ""
                say(f"(b) {setup.name}: {args.blocks} ABBA blocks of {args.seconds} s runs{where}")
                log_ratios, runs = measure_setup(
                    setup,
                    url=server.url,
                    suite=suite,
                    work=work,
                    private=private,
                    blocks=args.blocks,
                    pause_s=args.pause_s,
                    say=say,
                    steady_from_s=args.steady_from_s,
                )
                for kind in KINDS:
                    say(f"(b) {setup.name}, {kind} throughput: {summary(log_ratios[kind])}")
                if args.blocks >= 2:
                    mid, low, high, after = carryover_adjusted(runs)
                    say(
                        f"(b) {setup.name}, steady, with the run before as a factor: wrapper/bare {mid:.4f}, "
                        f"95 % interval [{low:.4f}, {high:.4f}]; a run after a wrapper run x{after:.4f}"
                    )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""``ClientSampler``: psutil figures of the machine that runs YCSB, plus pure summaries and warnings.

Per sample it keeps cumulative host CPU times (total and per core), the YCSB process's CPU time
(including its children, e.g. the ``java`` started by ``bin/ycsb``) and RSS, host memory used and the
network byte counters. ``client_summary`` / ``client_time_series`` turn samples into figures and
``client_bottleneck_warnings`` says when the client, not the server, may have limited the run.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd
import psutil

from ycsb_runner.monitors.periodic import PeriodicSampler

log = logging.getLogger(__name__)

NAN = float("nan")
# samples between two look-ups of the YCSB process's descendants: a look-up reads every process's /proc
# entry (1.2 ms of CPU a sample with 80 processes, 0.03 ms without it); a descendant found late has its
# CPU counted late, not lost (its counters are cumulative, and a reaped one is in its parent's)
LOOKUP_EVERY = 10
SATURATION = 0.90  # share of all cores counted as "near saturation"
TARGET_SHORTFALL = 0.80  # achieved / target below this means the target was not reached


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative CPU seconds: ``busy`` (not idle/iowait) and ``total`` (guest time not counted twice)."""

    busy: float
    total: float


@dataclass(frozen=True)
class ClientSample:
    t: float
    mono: float
    host: CpuTimes
    per_core: tuple[CpuTimes, ...]
    proc_cpu_s: float  # YCSB process + children, NaN when no process is attached or it has ended
    proc_rss_bytes: float
    mem_used_bytes: float
    net_sent_bytes: float
    net_recv_bytes: float


def cpu_times_of(times: Any) -> CpuTimes:
    """Busy/total seconds from a psutil ``scputimes`` (the same split ``psutil.cpu_percent`` uses)."""
    values = times._asdict()
    total = sum(values.values()) - values.get("guest", 0.0) - values.get("guest_nice", 0.0)
    idle = values.get("idle", 0.0) + values.get("iowait", 0.0)
    return CpuTimes(busy=total - idle, total=total)


def _busy_pct(c0: CpuTimes, c1: CpuTimes) -> float:
    dt = c1.total - c0.total
    if dt <= 0:
        return NAN
    return min(100.0, max(0.0, 100.0 * (c1.busy - c0.busy) / dt))


def descendants(proc: psutil.Process) -> list[psutil.Process]:
    """The live descendants of *proc* (psutil reads every process's /proc entry: about 1 ms)."""
    try:
        return proc.children(recursive=True)
    except psutil.Error:
        return []


def process_tree_cpu_rss(
    proc: psutil.Process, below: list[psutil.Process] | None = None
) -> tuple[float, float]:
    """CPU seconds (user+system, incl. reaped children) and RSS of a process and its live descendants
    (*below*: these, looked up earlier; None: look them up now)."""
    cpu, rss = 0.0, 0.0
    procs = [proc, *(descendants(proc) if below is None else below)]
    for i, p in enumerate(procs):
        try:
            with p.oneshot():
                t = p.cpu_times()
                r = p.memory_info().rss
        except psutil.Error:
            if i == 0:
                raise
            continue  # a child that just ended
        cpu += t.user + t.system + (t.children_user + t.children_system if i == 0 else 0.0)
        rss += r
    return cpu, float(rss)


# ----------------------------------------------------------------------------------------------------------
# pure summaries


def _pairs(samples: Sequence[ClientSample]) -> list[tuple[ClientSample, ClientSample]]:
    return list(zip(samples, samples[1:], strict=False))


def client_time_series(samples: Iterable[ClientSample]) -> pd.DataFrame:
    """One row per interval: host CPU %, max core %, YCSB CPU (% of one core), RSS, memory, network/s."""
    ordered = sorted(samples, key=lambda s: s.mono)
    rows = []
    for s0, s1 in _pairs(ordered):
        dt = s1.mono - s0.mono
        if dt <= 0:
            continue
        cores = [_busy_pct(a, b) for a, b in zip(s0.per_core, s1.per_core, strict=False)]
        rows.append(
            {
                "t": s1.t,
                "elapsed_s": s1.mono - ordered[0].mono,
                "dt_s": dt,
                "host_cpu_pct": _busy_pct(s0.host, s1.host),
                "host_core_pct_max": max(cores) if cores else NAN,
                "ycsb_cpu_core_pct": 100.0 * (s1.proc_cpu_s - s0.proc_cpu_s) / dt,
                "ycsb_rss_bytes": s1.proc_rss_bytes,
                "mem_used_bytes": s1.mem_used_bytes,
                "net_sent_per_s": (s1.net_sent_bytes - s0.net_sent_bytes) / dt,
                "net_recv_per_s": (s1.net_recv_bytes - s0.net_recv_bytes) / dt,
            }
        )
    columns = [
        "t",
        "elapsed_s",
        "dt_s",
        "host_cpu_pct",
        "host_core_pct_max",
        "ycsb_cpu_core_pct",
        "ycsb_rss_bytes",
        "mem_used_bytes",
        "net_sent_per_s",
        "net_recv_per_s",
    ]
    return pd.DataFrame(rows, columns=columns)


def _finite_max(values: Iterable[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return max(finite) if finite else NAN


def client_summary(
    samples: Iterable[ClientSample], *, t_start: float | None = None, t_end: float | None = None
) -> dict[str, float]:
    """Per-run client figures over the samples whose ``t`` is in ``[t_start, t_end]``.

    ``host_cpu_pct`` is busy/total over the whole window (% of all cores); ``ycsb_cpu_core_pct`` is the
    YCSB process tree's CPU as % of one core (200 = two full cores); ``*_max`` are the busiest interval.
    """
    window = sorted(
        (s for s in samples if (t_start is None or s.t >= t_start) and (t_end is None or s.t <= t_end)),
        key=lambda s: s.mono,
    )
    ncpu = len(window[0].per_core) if window else 0
    out: dict[str, float] = {"n_samples": float(len(window)), "ncpu": float(ncpu)}
    series = client_time_series(window)
    if len(window) < 2 or series.empty:
        for key in (
            "duration_s",
            "host_cpu_pct",
            "host_cpu_pct_max",
            "host_core_pct_max",
            "ycsb_cpu_core_pct",
            "ycsb_cpu_core_pct_max",
            "ycsb_rss_max_bytes",
            "mem_used_max_bytes",
            "net_sent_bytes",
            "net_recv_bytes",
            "net_sent_per_s",
            "net_recv_per_s",
        ):
            out[key] = NAN
        return out
    first, last = window[0], window[-1]
    dt = last.mono - first.mono
    proc_cpu = [s.proc_cpu_s for s in window if not math.isnan(s.proc_cpu_s)]
    proc_span = [s.mono for s in window if not math.isnan(s.proc_cpu_s)]
    ycsb = NAN
    if len(proc_cpu) >= 2 and proc_span[-1] > proc_span[0]:
        ycsb = 100.0 * (proc_cpu[-1] - proc_cpu[0]) / (proc_span[-1] - proc_span[0])
    out.update(
        {
            "duration_s": dt,
            "host_cpu_pct": _busy_pct(first.host, last.host),
            "host_cpu_pct_max": _finite_max(series["host_cpu_pct"]),
            "host_core_pct_max": _finite_max(series["host_core_pct_max"]),
            "ycsb_cpu_core_pct": ycsb,
            "ycsb_cpu_core_pct_max": _finite_max(series["ycsb_cpu_core_pct"]),
            "ycsb_rss_max_bytes": _finite_max(s.proc_rss_bytes for s in window),
            "mem_used_max_bytes": _finite_max(s.mem_used_bytes for s in window),
            "net_sent_bytes": last.net_sent_bytes - first.net_sent_bytes,
            "net_recv_bytes": last.net_recv_bytes - first.net_recv_bytes,
        }
    )
    out["net_sent_per_s"] = out["net_sent_bytes"] / dt
    out["net_recv_per_s"] = out["net_recv_bytes"] / dt
    return out


def _is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and not math.isnan(v)


def client_bottleneck_warnings(
    client_summary: Mapping[str, Any],
    target_ops: float | None,
    achieved_ops: float | None,
    ncpu: int | None,
) -> list[str]:
    """Reasons to doubt that the server was the bottleneck of a run (empty list = none found).

    * the client host's CPU was >= 90% busy over the run (all cores together);
    * the YCSB process used >= 90% of all cores;
    * a non-zero ``-target`` was set and less than 80% of it was achieved.
    """
    warnings: list[str] = []
    host = client_summary.get("host_cpu_pct")
    if _is_num(host) and host >= 100 * SATURATION:
        warnings.append(
            f"client host CPU was {host:.0f}% busy (>= {100 * SATURATION:.0f}% of all cores): "
            "the client may have limited throughput; use a bigger client or fewer threads"
        )
    ycsb = client_summary.get("ycsb_cpu_core_pct")
    if _is_num(ycsb) and ncpu and ycsb >= 100 * SATURATION * ncpu:
        warnings.append(
            f"the YCSB process used {ycsb / 100:.2f} of {ncpu} cores (>= {100 * SATURATION:.0f}%): "
            "the client may have limited throughput"
        )
    target_set = _is_num(target_ops) and target_ops > 0
    if target_set and _is_num(achieved_ops) and achieved_ops < TARGET_SHORTFALL * target_ops:
        warnings.append(
            f"achieved {achieved_ops:.0f} ops/s is {100 * achieved_ops / target_ops:.0f}% of -target "
            f"{target_ops:.0f} (< {100 * TARGET_SHORTFALL:.0f}%): the server or the client could not keep up"
        )
    return warnings


# ----------------------------------------------------------------------------------------------------------
# sampler (I/O)


@dataclass(frozen=True)
class ClientSampleError:
    t: float
    message: str


class ClientSampler(PeriodicSampler):
    """Background psutil sampler of the YCSB client host and (optionally) the YCSB process tree.

    ``pid`` may be given later with ``attach(pid)`` once YCSB has been launched. ``start()`` and
    ``stop()`` each take a sample synchronously; it is also a context manager.
    """

    def __init__(
        self, pid: int | None = None, interval_s: float = 1.0, *, clock: Callable[[], float] = time.time
    ) -> None:
        self._init_periodic(interval_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._samples: list[ClientSample] = []
        self._errors: list[ClientSampleError] = []
        self._proc: psutil.Process | None = None
        self._below: list[psutil.Process] = []  # its descendants when last looked up
        self._samples_since_lookup = 0
        self.pid: int | None = None
        if pid is not None:
            self.attach(pid)

    def attach(self, pid: int) -> None:
        """Follow this process (and its children) from the next sample on."""
        with self._lock:
            self.pid = pid
            self._samples_since_lookup = 0
            try:
                self._proc = psutil.Process(pid)
            except psutil.Error as exc:
                self._proc = None
                self._errors.append(ClientSampleError(self._clock(), f"psutil pid {pid}: {exc}"))

    def sample_now(self) -> ClientSample | None:
        """Take one sample now (errors are recorded, not raised)."""
        with self._lock:
            try:
                proc_cpu, proc_rss = NAN, NAN
                if self._proc is not None:
                    if self._samples_since_lookup % LOOKUP_EVERY == 0:
                        self._below = descendants(self._proc)
                    self._samples_since_lookup += 1
                    try:
                        proc_cpu, proc_rss = process_tree_cpu_rss(self._proc, self._below)
                    except psutil.Error as exc:
                        self._errors.append(ClientSampleError(self._clock(), f"psutil pid {self.pid}: {exc}"))
                        self._proc = None
                host = cpu_times_of(psutil.cpu_times())
                per_core = tuple(cpu_times_of(c) for c in psutil.cpu_times(percpu=True))
                mem = psutil.virtual_memory()
                net = psutil.net_io_counters()
                sample = ClientSample(
                    t=self._clock(),
                    mono=time.monotonic(),
                    host=host,
                    per_core=per_core,
                    proc_cpu_s=proc_cpu,
                    proc_rss_bytes=proc_rss,
                    mem_used_bytes=float(mem.used),
                    net_sent_bytes=float(net.bytes_sent) if net else NAN,
                    net_recv_bytes=float(net.bytes_recv) if net else NAN,
                )
            except Exception as exc:  # noqa: BLE001 - recorded, the sampler keeps going
                self._errors.append(ClientSampleError(self._clock(), f"psutil: {type(exc).__name__}: {exc}"))
                return None
            self._samples.append(sample)
            return sample

    @property
    def samples(self) -> list[ClientSample]:
        with self._lock:
            return list(self._samples)

    @property
    def errors(self) -> list[ClientSampleError]:
        with self._lock:
            return list(self._errors)

    def summary(self, t_start: float | None = None, t_end: float | None = None) -> dict[str, float]:
        return client_summary(self.samples, t_start=t_start, t_end=t_end)

    def time_series(self) -> pd.DataFrame:
        return client_time_series(self.samples)

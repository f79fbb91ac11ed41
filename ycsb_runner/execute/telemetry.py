"""Telemetry per load generator during a multi-client step: CPU, memory and network of each client host
and its YCSB process, with the saturation warnings of :mod:`ycsb_runner.monitors.client` per client.

``local`` is sampled with psutil (:class:`~ycsb_runner.monitors.client.ClientSampler`, the YCSB process tree).
A remote client is sampled over SSH: one session runs a small ``sh`` loop printing ``/proc/stat``,
``/proc/meminfo``, ``/proc/net/dev`` and the YCSB JVM's ``/proc/<pid>/stat`` every interval; the blocks are
parsed here (:func:`parse_block`, pure) into the same samples psutil gives, so the figures, columns and
warnings are the same for every client. Linux clients only (``/proc``); elsewhere the figures are missing and
the step says so.
"""

from __future__ import annotations

import contextlib
import math
import shlex
import subprocess
import threading
import time
from typing import Any

import pandas as pd

from ycsb_runner.execute.clients import Client
from ycsb_runner.monitors.client import (
    ClientSample,
    ClientSampler,
    CpuTimes,
    client_bottleneck_warnings,
    client_summary,
    client_time_series,
)

NAN = math.nan
BEGIN, END = "@@ycsb-runner-sample", "@@end"


def sampler_script(workdir: str, interval_s: float) -> str:
    """The loop a remote client runs (ends when ycsb-runner stops reading: the next write fails)."""
    pid_file = shlex.quote(f"{workdir}/pid")
    return (
        "tck=$(getconf CLK_TCK); pg=$(getconf PAGESIZE); while :; do "
        f'echo "{BEGIN} $(date +%s.%N) $tck $pg"; '
        "grep '^cpu' /proc/stat; grep -E '^(MemTotal|MemAvailable):' /proc/meminfo; "
        "tail -n +3 /proc/net/dev; "
        f"p=$(cat {pid_file} 2>/dev/null); "
        '[ -n "$p" ] && [ -r /proc/$p/stat ] && echo "proc $(cat /proc/$p/stat)"; '
        f'echo "{END}" || exit 0; sleep {interval_s:g}; done'
    )


def _cpu(fields: list[str], tck: float) -> CpuTimes:
    v = [float(x) / tck for x in fields]
    v += [0.0] * (10 - len(v))
    user, nice, system, idle, iowait, irq, softirq, steal, guest, guest_nice = v[:10]
    total = sum(v[:10]) - guest - guest_nice
    return CpuTimes(busy=total - idle - iowait, total=total)


def parse_block(lines: list[str], mono: float) -> ClientSample:
    """One sample from the lines between ``BEGIN`` and ``END`` (the BEGIN line first)."""
    _, t, tck_s, page_s = lines[0].split()
    tck, page = float(tck_s), float(page_s)
    host = CpuTimes(NAN, NAN)
    cores: list[CpuTimes] = []
    mem: dict[str, float] = {}
    sent = recv = 0.0
    proc_cpu = proc_rss = NAN
    for line in lines[1:]:
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "cpu":
            host = _cpu(parts[1:], tck)
        elif parts[0].startswith("cpu") and parts[0][3:].isdigit():
            cores.append(_cpu(parts[1:], tck))
        elif parts[0] in ("MemTotal:", "MemAvailable:"):
            mem[parts[0]] = float(parts[1]) * 1024
        elif parts[0] == "proc":
            # /proc/<pid>/stat: the command is in parentheses and may hold spaces; fields after it
            rest = line.rsplit(")", 1)[1].split()
            utime, stime, cutime, cstime = (float(x) / tck for x in rest[11:15])
            proc_cpu = utime + stime + cutime + cstime
            proc_rss = float(rest[21]) * page
        elif ":" in line:  # /proc/net/dev: "  eth0: rx_bytes ... (8 fields) tx_bytes ..."
            counters = line.split(":", 1)[1].split()
            if len(counters) >= 9:
                recv += float(counters[0])
                sent += float(counters[8])
    used = mem.get("MemTotal:", NAN) - mem.get("MemAvailable:", NAN)
    return ClientSample(
        t=float(t),
        mono=mono,
        host=host,
        per_core=tuple(cores),
        proc_cpu_s=proc_cpu,
        proc_rss_bytes=proc_rss,
        mem_used_bytes=used,
        net_sent_bytes=sent,
        net_recv_bytes=recv,
    )


class RemoteSampler:
    """Samples a remote client over one SSH session (see :func:`sampler_script`)."""

    def __init__(self, client: Client, workdir: str, interval_s: float = 1.0) -> None:
        self.client = client
        self.workdir = workdir
        self.interval_s = interval_s
        self.samples: list[ClientSample] = []
        self.errors: list[str] = []
        self._proc: subprocess.Popen | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> RemoteSampler:
        self._proc = self.client.start(
            sampler_script(self.workdir, self.interval_s),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._thread = threading.Thread(target=self._read, name=f"telemetry-{self.client.name}", daemon=True)
        self._thread.start()
        return self

    def _read(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        block: list[str] | None = None
        for raw in self._proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            if line.startswith(BEGIN):
                block = [line]
            elif line == END and block:
                try:
                    self.samples.append(parse_block(block, time.monotonic()))
                except (ValueError, IndexError) as err:
                    self.errors.append(f"unreadable sample: {err}")
                block = None
            elif block is not None:
                block.append(line)

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(5)
        if self._thread is not None:
            self._thread.join(5)


class ClientTelemetry:
    """Telemetry of every client of a step: ``start`` after the go, ``stop``, then ``results``."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self.interval_s = interval_s
        self.samplers: dict[str, Any] = {}

    def start(self, client: Client, workdir: str, local_pid: int | None) -> None:
        try:
            if client.spec.local:
                self.samplers[client.name] = ClientSampler(pid=local_pid, interval_s=self.interval_s).start()
            else:
                self.samplers[client.name] = RemoteSampler(client, workdir, self.interval_s).start()
        except Exception:  # noqa: BLE001 - telemetry must never stop a benchmark
            pass

    def stop(self) -> None:
        for s in self.samplers.values():
            with contextlib.suppress(Exception):
                s.stop()

    def results(self) -> dict[str, dict[str, Any]]:
        """client -> {"summary": {...}, "series": DataFrame, "warnings": [...]} (one line per warning)."""
        out: dict[str, dict[str, Any]] = {}
        for name, s in self.samplers.items():
            samples = list(s.samples)
            summary = client_summary(samples)
            ncpu = int(summary.get("ncpu") or 0) or None
            warnings = [f"client {name}: {w}" for w in client_bottleneck_warnings(summary, None, None, ncpu)]
            if len(samples) < 2:
                warnings.append(f"client {name}: no telemetry (fewer than two samples)")
            out[name] = {"summary": summary, "series": client_time_series(samples), "warnings": warnings}
        return out


def series_with_time(df: pd.DataFrame) -> pd.DataFrame:
    from ycsb_runner.runs.model import iso_utc

    if df.empty or "t" not in df:
        return df
    df = df.copy()
    df.insert(list(df.columns).index("t"), "time", df["t"].map(iso_utc))
    return df.drop(columns="t")

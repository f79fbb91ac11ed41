"""Canaries: what the database cannot change, measured in the same run as the steps, so that ``regress`` can
tell a slower machine from a slower database (MongoDB's performance team runs canary benchmarks beside its
tests for this: Ingo and Daly, "Reducing variability in performance tests on EC2", 2019).

* **load generator**: YCSB's no-op binding (``site.ycsb.BasicDB``, as ``probe-client`` runs it) for
  :data:`SECONDS` seconds at :data:`THREADS` thread(s) on each load generator (its JVM with the C1 compiler
  only), before the first step and after the last one: the ops/s the client can generate at all, whatever
  the server;
* **round trip**: :data:`PINGS` ``ping`` commands back to back from this machine, before and after, the
  median of each batch (back to back, so that a server that is merely slow to be scheduled answers most of
  them in its first time slice: what moves it is the network and the host, not the database's work);
* **this host** (the load generator's; the server's too when it runs here): over the run, from the first
  canary to the last, the share of its CPU time stolen by the hypervisor and the share other processes used
  (busy time less that of ycsb-runner, its YCSB JVMs and the embedded server), from ``/proc/stat``.

Every figure goes into the manifest's ``canaries`` section and the history (phase ``canary``). A canary
that cannot be measured (no ``/proc/stat``, a server on this host whose process is unknown) is left out and
the reason recorded; a canary never fails the run.
"""

from __future__ import annotations

import os
import socket
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psutil
from pymongo import MongoClient
from pymongo.errors import PyMongoError

from ycsb_runner.errors import UserError
from ycsb_runner.execute.clients import Client, ClientSpec
from ycsb_runner.runs.model import LOCAL_CLIENT

SECONDS = 2  # each BasicDB probe (plus the JVM's start)
THREADS = 1
# the probe's JVM compiles with C1 only: one JVM's plateau after C2 varies from another's by more than a
# canary may (2 s probes here, 1 thread: CV 5 % with C1 only, 17 % with the JVM's default)
PROBE_JVM_ARGS = ("-XX:TieredStopAtLevel=1",)
PINGS = 50
WARM_PINGS = 5
BEFORE, AFTER = "before", "after"


@dataclass(frozen=True)
class CpuMark:
    """The host's CPU times and ours at one moment (seconds)."""

    t: float  # wall clock
    busy: float  # user, nice, system, irq, softirq of every CPU
    total: float  # busy, idle, iowait and steal
    steal: float
    ours: float  # this process and its waited children, plus the embedded server
    server_pid: int | None


def _our_cpu(server_pid: int | None) -> float:
    t = os.times()
    ours = t.user + t.system + t.children_user + t.children_system
    if server_pid is not None:
        try:
            c = psutil.Process(server_pid).cpu_times()
            ours += c.user + c.system + c.children_user + c.children_system
        except psutil.Error:  # it has just stopped: its times are the children's now
            pass
    return ours


def cpu_mark(server_pid: int | None) -> CpuMark | None:
    """None where the host's CPU times cannot be read."""
    try:
        c = psutil.cpu_times()
    except (OSError, AttributeError):
        return None
    busy = c.user + getattr(c, "nice", 0.0) + c.system + getattr(c, "irq", 0.0) + getattr(c, "softirq", 0.0)
    steal = getattr(c, "steal", 0.0)
    total = busy + c.idle + getattr(c, "iowait", 0.0) + steal
    return CpuMark(time.time(), busy, total, steal, _our_cpu(server_pid), server_pid)


def host_shares(first: CpuMark, last: CpuMark) -> tuple[float | None, float | None, str]:
    """(steal %, other processes' CPU %, why the second is missing) between two marks, in % of the host's
    CPU time (every core)."""
    total = last.total - first.total
    if total <= 0:
        return None, None, "no CPU time passed between the canaries"
    steal = 100.0 * (last.steal - first.steal) / total
    if first.server_pid != last.server_pid:
        return steal, None, "the embedded server was restarted during the run: its CPU time is not known"
    others = (last.busy - first.busy) - (last.ours - first.ours)
    return steal, max(0.0, 100.0 * others / total), ""


def local_server(url: str) -> tuple[bool, int | None]:
    """(a host of *url*'s seed list is this machine, the pid of the process listening on its port here, if
    it can be seen): a server here whose process is not known would have its CPU time counted as other
    processes'."""
    from ycsb_runner.safe.lock import resolved_addresses, url_hosts

    mine = {"127.0.0.1", "::1", "0.0.0.0", "::"} | {
        a.address.split("%")[0] for addrs in psutil.net_if_addrs().values() for a in addrs
    }
    ports = {
        port
        for host, port in url_hosts(url)
        if any(a.rsplit(":", 1)[0] in mine for a in resolved_addresses(host, port))
    }
    if not ports:
        return False, None
    try:
        listening = [
            c.pid
            for c in psutil.net_connections(kind="tcp")
            if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port in ports and c.pid
        ]
    except (psutil.Error, OSError):  # another user's sockets: not readable without privileges
        listening = []
    return True, listening[0] if len(set(listening)) == 1 else None


def ping_median_us(url: str, pings: int = PINGS) -> float:
    """The median round trip (µs) of *pings* ``ping`` commands sent back to back (after WARM_PINGS)."""
    with MongoClient(url, serverSelectionTimeoutMS=8000, connectTimeoutMS=8000) as client:
        times = []
        for i in range(WARM_PINGS + pings):
            t0 = time.perf_counter()
            client.admin.command("ping")
            if i >= WARM_PINGS:
                times.append(1e6 * (time.perf_counter() - t0))
    return statistics.median(times)


@dataclass
class Canaries:
    """The canaries of one run: :meth:`before` the first step, :meth:`after` the last, then :meth:`figures`
    for the manifest."""

    url: str
    suite: Any
    java: str
    classpath: list[str]
    clients: list[Client] = field(default_factory=list)  # empty: this machine
    # the embedded server's process (its pid follows restarts); None: a server of the user's, whose process
    # here, if it runs here, the canaries find from its URL (``local_server``) when they first measure
    server_pid: Callable[[], int | None] | None = None
    server_here: bool = False  # the server runs on this host (its CPU is ours when its process is known)
    _ops: dict[str, dict[str, float]] = field(default_factory=dict)
    _rtt: dict[str, float] = field(default_factory=dict)
    _marks: dict[str, CpuMark | None] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def before(self) -> None:
        self._measure(BEFORE)
        self._marks[BEFORE] = cpu_mark(self._server())

    def after(self) -> None:
        self._marks[AFTER] = cpu_mark(self._server())
        self._measure(AFTER)

    def _server(self) -> int | None:
        """The server's process here (None: none known)."""
        if self.server_pid is None:
            self.server_here, pid = local_server(self.url)
            self.server_pid = lambda: pid
        return self.server_pid()

    def _generators(self) -> list[Client]:
        return self.clients or [Client(ClientSpec(LOCAL_CLIENT))]

    def _measure(self, when: str) -> None:
        from ycsb_runner.execute.probe import probe_client

        for client in self._generators():
            try:
                got = probe_client(
                    client,
                    self.suite,
                    java=self.java,
                    classpath=self.classpath,
                    threads=THREADS,
                    seconds=SECONDS,
                    jvm_args=PROBE_JVM_ARGS,
                )
                self._ops.setdefault(client.name, {})[when] = got.ops_s
            except UserError as err:
                self.errors.append(f"load generator {client.name} ({when}): {err}")
        try:
            self._rtt[when] = ping_median_us(self.url)
        except (PyMongoError, OSError) as err:
            self.errors.append(f"round trip ({when}): {type(err).__name__}: {str(err).splitlines()[0][:160]}")

    def figures(self) -> dict[str, Any]:
        """The manifest's ``canaries`` section."""
        host: dict[str, Any] = {"name": socket.gethostname(), "cpus": psutil.cpu_count()}
        first, last = self._marks.get(BEFORE), self._marks.get(AFTER)
        if first is None or last is None:
            host["why_not"] = "the run ended before its last canary" if first else "no /proc/stat here"
        else:
            steal, others, why = host_shares(first, last)
            if self.server_here and first.server_pid is None:
                others, why = None, "the server runs on this host and its process is not known"
            host.update(seconds=round(last.t - first.t, 3), steal_pct=steal, others_cpu_pct=others)
            if why:
                host["why_not"] = why
        return {
            "load_generator": [
                {"client": name, "threads": THREADS, "seconds": SECONDS, "ops_s": ops}
                for name, ops in self._ops.items()
            ],
            "rtt_us": dict(self._rtt),
            "pings": PINGS,
            "host": host,
            "errors": list(self.errors),
        }

"""Glue between the runner and the samplers: one server + one client sampler around each measured run."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pymongo import MongoClient

from ycsb_runner.monitors.client import ClientSampler, client_bottleneck_warnings
from ycsb_runner.monitors.server_status import ServerSampler


class StepMonitor:
    """Started with the YCSB pid once it is launched; ``results()`` after ``stop()``."""

    def __init__(self, url: str, server_pid: int | None, interval_s: float, target: int) -> None:
        self.url = url
        self.server_pid = server_pid
        self.interval_s = interval_s
        self.target = target
        self.client: MongoClient | None = None
        self.server: ServerSampler | None = None
        self.host: ClientSampler | None = None

    def start(self, ycsb_pid: int) -> None:
        self.client = MongoClient(self.url, serverSelectionTimeoutMS=5000, appname="ycsb-runner-sampler")
        self.server = ServerSampler(self.client, interval_s=self.interval_s, pid=self.server_pid).start()
        self.host = ClientSampler(pid=ycsb_pid, interval_s=min(1.0, self.interval_s)).start()

    def stop(self) -> None:
        for sampler in (self.host, self.server):
            if sampler is not None:
                sampler.stop()
        if self.client is not None:
            self.client.close()

    def results(self) -> dict[str, Any]:
        figures: dict[str, Any] = {}
        warnings: list[str] = []
        out: dict[str, Any] = {"figures": figures, "warnings": warnings}
        if self.server is not None:
            figures.update({f"server_{k}": v for k, v in self.server.figures().as_dict().items()})
            out["server_series"] = self.server.time_series()
            cores, source = self.server.cores
            figures.update(server_cores=cores, server_cores_source=source or None)
            if (note := self.server.cores_warning()) is not None:
                warnings.append(note)
            if self.server.errors:
                warnings.append(
                    f"{len(self.server.errors)} serverStatus poll(s) failed: {self.server.errors[-1].message}"
                )
        if self.host is not None:
            summary = self.host.summary()
            figures.update({f"client_{k}": v for k, v in summary.items()})
            out["client_series"] = self.host.time_series()
            ncpu = int(summary.get("ncpu") or 0) or None
            warnings.extend(client_bottleneck_warnings(summary, None, None, ncpu))
        return out


def monitor_factory(
    *, server_pid: Callable[[], int | None], interval_s: float, target: int
) -> Callable[..., StepMonitor]:
    """*server_pid* is asked at each run: a restart-based audit switch changes it."""

    def make(step: Any, url: str) -> StepMonitor:
        return StepMonitor(url, server_pid(), interval_s, target)

    return make

"""``ServerSampler``: polls ``serverStatus`` in a background thread and keeps the raw samples.

Polls are cheap: ``repl``, ``locks`` and ``wiredTiger`` are excluded, except that every ``wt_every``-th
poll includes ``wiredTiger`` (its section takes no sub-projection) and only its ``cache`` figures are
kept. ``hostInfo`` is read once at ``start()``. The sampler counts its own commands so that they can be
taken out of ``opcounters.command``. With ``pid`` (a local server, e.g. the embedded one) it also reads
that process's CPU times and RSS with psutil. Errors are recorded in ``errors``, never raised.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import psutil
from pymongo import MongoClient
from pymongo.errors import ConnectionFailure

from ycsb_runner.monitors import formulas
from ycsb_runner.monitors.formulas import ServerFigures, ServerSample
from ycsb_runner.monitors.periodic import PeriodicSampler
from ycsb_runner.safe.secrets import mask_url

log = logging.getLogger(__name__)

EXCLUDED_SECTIONS = ("repl", "locks")


@dataclass(frozen=True)
class SampleError:
    """A failed poll (or a failed psutil read): client time and a one-line, password-masked message."""

    t: float
    message: str


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
    return mask_url(text)[:500]


class ServerSampler(PeriodicSampler):
    """Background ``serverStatus`` sampler.

    ``start()`` reads ``hostInfo`` and takes a first sample synchronously; ``stop()`` takes a last one,
    so a ``with ServerSampler(client):`` block is covered from end to end. ``sample_now()`` adds a sample
    at a chosen moment (e.g. right before and after a YCSB phase) from any thread.
    """

    def __init__(
        self,
        client: MongoClient,
        interval_s: float = 2.0,
        pid: int | None = None,
        *,
        wt_every: int = 5,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._init_periodic(interval_s)
        self._client = client
        self.pid = pid
        self.wt_every = max(1, wt_every)
        self._clock = clock
        self._lock = threading.Lock()
        self._samples: list[ServerSample] = []
        self._errors: list[SampleError] = []
        self._own_commands = 0
        self._polls = 0
        self._has_wiredtiger: bool | None = None
        self._proc: psutil.Process | None = None
        self.host_info: dict[str, Any] | None = None

    # -- lifecycle ---------------------------------------------------------------------------------------

    def _prepare(self) -> None:
        """Read hostInfo (and open the server process) once, before the first sample."""
        self._read_host_info()
        if self.pid is not None:
            self._open_process()

    # -- sampling ----------------------------------------------------------------------------------------

    def _command(self, command: dict[str, Any]) -> dict[str, Any]:
        """Run one admin command and count it as the sampler's own (unless it never reached the server)."""
        try:
            reply = self._client.admin.command(command)
        except ConnectionFailure:
            raise
        except Exception:
            self._own_commands += 1
            raise
        self._own_commands += 1
        return reply

    def _record_error(self, where: str, exc: BaseException) -> None:
        err = SampleError(self._clock(), f"{where}: {_one_line(exc)}")
        self._errors.append(err)
        log.debug("sampler error %s", err.message)

    def _read_host_info(self) -> None:
        with self._lock:
            try:
                self.host_info = self._command({"hostInfo": 1})
            except Exception as exc:  # noqa: BLE001 - recorded, the run goes on
                self._record_error("hostInfo", exc)

    def _open_process(self) -> None:
        try:
            self._proc = psutil.Process(self.pid)
        except (psutil.Error, ValueError) as exc:
            self._record_error(f"psutil pid {self.pid}", exc)

    def _status_command(self) -> dict[str, Any]:
        cmd: dict[str, Any] = {"serverStatus": 1}
        for section in EXCLUDED_SECTIONS:
            cmd[section] = 0
        with_wt = self._has_wiredtiger is not False and self._polls % self.wt_every == 0
        if not with_wt:
            cmd["wiredTiger"] = 0
        return cmd

    def _proc_figures(self) -> tuple[float | None, float | None]:
        if self._proc is None:
            return None, None
        try:
            with self._proc.oneshot():
                times = self._proc.cpu_times()
                rss = self._proc.memory_info().rss
            return float(times.user + times.system), float(rss)
        except psutil.Error as exc:
            self._record_error(f"psutil pid {self.pid}", exc)
            self._proc = None
            return None, None

    def sample_now(self) -> ServerSample | None:
        """Poll once now; returns the sample, or None when the poll failed (the error is recorded)."""
        with self._lock:
            own_before = self._own_commands
            cmd = self._status_command()
            try:
                doc = self._command(cmd)
            except Exception as exc:  # noqa: BLE001 - recorded, the sampler keeps going
                self._record_error("serverStatus", exc)
                return None
            finally:
                self._polls += 1
            mono, t = time.monotonic(), self._clock()
            if "wiredTiger" not in cmd and self._has_wiredtiger is None:
                self._has_wiredtiger = isinstance(doc.get("wiredTiger"), dict)
            cpu_s, rss = self._proc_figures()
            sample = formulas.make_sample(
                doc, t=t, mono=mono, own_commands_before=own_before, proc_cpu_s=cpu_s, proc_rss_bytes=rss
            )
            self._samples.append(sample)
            return sample

    # -- results -----------------------------------------------------------------------------------------

    @property
    def samples(self) -> list[ServerSample]:
        with self._lock:
            return list(self._samples)

    @property
    def errors(self) -> list[SampleError]:
        with self._lock:
            return list(self._errors)

    @property
    def own_commands(self) -> int:
        """Commands the sampler has sent so far (hostInfo + serverStatus polls)."""
        return self._own_commands

    @property
    def cores(self) -> tuple[int | None, str]:
        """(cores available to the server process, where from): ``formulas.host_cores``; when the server
        does not report numCoresAvailableToProcess and runs here (pid), the CPUs its affinity mask allows."""
        cores, source = formulas.host_cores(self.host_info)
        if source != formulas.CORES_AVAILABLE and self.pid is not None:
            local = local_cores_available(self.pid)
            if local and (cores is None or local < cores):
                return local, "the local server process's CPU affinity (hostInfo has no usable count)"
            if local == cores:
                return cores, f"{source}; equal to the local server process's CPU affinity"
        return cores, source

    @property
    def num_cores(self) -> int | None:
        """The cores available to the server process (``cores`` without where from)."""
        return self.cores[0]

    def cores_warning(self) -> str | None:
        """One line when CPU % divides by all the host's CPUs because nothing better is known."""
        cores, source = self.cores
        if cores is None or source == formulas.CORES_AVAILABLE or "affinity" in source:
            return None
        return (
            f"server CPU % is per {cores} cores from {source}: on a server confined to fewer CPUs (cpuset, "
            "container quota) it is understated"
        )

    def figures(self, t_start: float | None = None, t_end: float | None = None) -> ServerFigures:
        """Per-run figures over the samples taken in ``[t_start, t_end]`` (client epoch seconds)."""
        return formulas.server_figures(self.samples, self.num_cores, t_start=t_start, t_end=t_end)

    def time_series(self) -> pd.DataFrame:
        """One row per sample interval (see ``formulas.server_time_series``)."""
        return formulas.server_time_series(self.samples, self.num_cores)

    def samples_frame(self) -> pd.DataFrame:
        """The raw samples, one row each."""
        return formulas.samples_frame(self.samples)


def local_cores_available(pid: int) -> int | None:
    """How many CPUs process ``pid`` may run on (its affinity mask / cpuset); logical CPUs as a fallback."""
    try:
        return len(psutil.Process(pid).cpu_affinity()) or None
    except (psutil.Error, AttributeError, OSError):  # AttributeError: no cpu_affinity on this platform
        return psutil.cpu_count(logical=True)

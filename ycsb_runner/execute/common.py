"""What every step executor shares: the run's context, the result frames, status lines, the document count
after a load and the storing of a monitor's samples.

The local executor (:mod:`ycsb_runner.execute.runner`) and the multi-client one
(:mod:`ycsb_runner.execute.multi`) both take a :class:`StepContext` and fill the same
:class:`~ycsb_runner.runs.model.StepRecord` and :class:`Frames`; neither reaches into the other.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from pymongo import MongoClient
from pymongo.errors import PyMongoError

from ycsb_runner.prepare.commandline import database_name
from ycsb_runner.runs.model import StepKeys, StepRecord, add_keys, iso_utc, local_times_to_utc

if TYPE_CHECKING:
    import jinja2

    from ycsb_runner.install import JavaInfo, YcsbInstall
    from ycsb_runner.prepare.plan import Step
    from ycsb_runner.runs.model import RunResult
    from ycsb_runner.safe.secrets import Masker

STATUS_RE = re.compile(r"(\d+) sec: (\d+) operations;(?: ([\d.,]+) current ops/sec;)?")

# the frames a run saves; the first three are written (empty) even when no step produced rows
FRAME_NAMES = ("summary", "timeseries", "operations", "server_metrics", "client_metrics")
ALWAYS_SAVED = ("summary", "timeseries", "operations")


@dataclass(frozen=True)
class StatusLine:
    """One of YCSB's periodic status lines: seconds since start, operations so far, current ops/s."""

    sec: int
    ops: int
    cur: float


def status_line(line: str) -> StatusLine | None:
    """The status figures in a YCSB stderr line, or None when it is not a status line. Pure."""
    m = STATUS_RE.search(line)
    if m is None:
        return None
    return StatusLine(int(m.group(1)), int(m.group(2)), float((m.group(3) or "0").replace(",", "")))


def status_times(df: pd.DataFrame | None) -> pd.DataFrame | None:
    """Status lines: YCSB's local ``timestamp`` becomes ``time`` in ISO-8601 UTC."""
    if df is None or df.empty or "timestamp" not in df:
        return df
    df = df.copy()
    df.insert(list(df.columns).index("timestamp"), "time", local_times_to_utc(df["timestamp"]))
    return df.drop(columns="timestamp")


def epoch_times(df: pd.DataFrame | None) -> pd.DataFrame | None:
    """Sampler series: epoch ``t`` becomes ``time`` in ISO-8601 UTC."""
    if df is None or df.empty or "t" not in df:
        return df
    df = df.copy()
    df.insert(list(df.columns).index("t"), "time", df["t"].map(iso_utc))
    return df.drop(columns="t")


class Frames:
    """The rows of a run's CSVs as the steps produce them, each part with its step's key columns."""

    def __init__(self) -> None:
        self.parts: dict[str, list[pd.DataFrame]] = {name: [] for name in FRAME_NAMES}

    def add(self, name: str, keys: StepKeys, df: pd.DataFrame | None) -> None:
        if df is None or df.empty:
            return
        self.parts[name].append(add_keys(df, keys))

    def tables(self) -> dict[str, pd.DataFrame]:
        """One frame per CSV to save (the ones without rows only when they are always saved)."""
        return {
            name: pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
            for name, parts in self.parts.items()
            if parts or name in ALWAYS_SAVED
        }


def documents_warning(documents: int | None, expected: int) -> str | None:
    """The warning when a load left another number of documents than it inserted. Pure."""
    if documents is None or documents == expected:
        return None
    return f"the collection holds {documents} documents after loading {expected}"


def store_monitor(record: StepRecord, monitor: Any, frames: Frames, *, server_only: bool = False) -> None:
    """A step's monitor results into *record* (figures, warnings) and *frames* (the sampled series).

    *server_only*: keep the server's part alone (the several-clients executor measures each client itself).
    """
    try:
        res = monitor.results()
    except Exception as err:  # noqa: BLE001 - a sampler problem must not lose the run
        record.warnings.append(f"metric sampling failed: {err}")
        return
    figures = res.get("figures", {})
    warnings = res.get("warnings", [])
    if server_only:
        figures = {k: v for k, v in figures.items() if k.startswith("server_")}
        warnings = [w for w in warnings if "serverStatus" in w or "server CPU" in w]
    record.figures.update(figures)
    record.warnings.extend(warnings)
    frames.add("server_metrics", record.keys, epoch_times(res.get("server_series")))
    if not server_only:
        frames.add("client_metrics", record.keys, epoch_times(res.get("client_series")))


@dataclass
class StepContext:
    """What a step executor needs from the run: the suite, the server, the YCSB install, where results go.

    The runner builds one per run; executors read it and add their rows to ``frames``."""

    suite: Any
    url: str
    java: JavaInfo
    install: YcsbInstall
    result: RunResult
    env: jinja2.Environment
    masker: Masker
    frames: Frames
    jvm_args: list[str] = field(default_factory=list)
    max_error_rate: float = 0.01
    progress: Callable[[str, dict], None] = lambda event, data: None
    monitors: Callable[[Any, str], Any] | None = None  # (step, url) -> monitor with start/stop/results
    clients: list[Any] = field(default_factory=list)
    class_archive: Path | None = None  # set-up's class-data archive for local JVMs (ycsb_runner.install.cds)

    def monitor_for(self, step: Step) -> Any | None:
        """The step's metric sampler (run steps only), or None."""
        return self.monitors(step, self.url) if (self.monitors and step.kind == "run") else None

    def drop_collection(self) -> None:
        db = database_name(self.url)
        with MongoClient(self.url, serverSelectionTimeoutMS=10000) as client:
            client[db].drop_collection(self.suite.mongodb.table)

    def count_documents(self) -> int | None:
        try:
            db = database_name(self.url)
            with MongoClient(self.url, serverSelectionTimeoutMS=10000) as client:
                return int(client[db][self.suite.mongodb.table].count_documents({}))
        except PyMongoError:
            return None

    def check_documents(self, record: StepRecord) -> None:
        """After a load: the collection's document count into *record*, warned about when it is not the
        suite's ``recordcount``."""
        record.documents = self.count_documents()
        warning = documents_warning(record.documents, self.suite.dataset.recordcount)
        if warning:
            record.warnings.append(warning)

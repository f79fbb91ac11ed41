"""The run folder, typed: the one place that writes ``results/<run-id>/`` and reads it back.

``RunResult`` is a run folder: ``RunResult.create`` makes one, ``RunResult.load`` opens one, and every stage
after the runner (tables, compare, report, history, multi-client merging) reads through it. Its manifest is a
:class:`Manifest` with one :class:`StepRecord` per step. Every CSV starts with the same key columns
(:data:`KEY_COLUMNS`), spelled and typed alike, so ``pd.concat``/``merge`` across files and runs needs no
cleaning. Times are ISO-8601 UTC strings (``2026-12-01T05:47:05.327Z``); latency columns carry their unit
(``_us``), rates theirs (``_ops_s``, ``_per_s``). The columns of each file are documented in ``RESULTS.md``,
generated from :mod:`ycsb_runner.runs.columns` (``python -m ycsb_runner.runs.columns > RESULTS.md``; a test
checks they agree).
"""

from __future__ import annotations

import functools
import json
import math
import re
import sys
import time
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from ycsb_runner.errors import UserError
from ycsb_runner.paths import check_name
from ycsb_runner.safe.files import (
    atomic_write_bytes,
    atomic_write_csv,
    atomic_write_json,
    check_inside,
    disk_error,
    read_bounded,
)

if TYPE_CHECKING:  # pandas is loaded by what makes or reads a frame, not by reading a manifest
    import pandas as pd

FORMAT_VERSION = 4
# The older formats this version still reads, upgraded in memory (``_upgrade``) as pyperf reads older JSON:
# format 2 (before ``target.engine``), format 3 (a step's ``status`` named ``verdict``).
READABLE_FORMATS = (2, 3, FORMAT_VERSION)
MANIFEST = "manifest.json"
# The folder layout of a run (RESULTS.md): every other module asks for these names and paths here.
STEPS_DIR = "steps"  # steps/<step>/ holds each step's raw logs
HDR_DIR = "hdr"  # steps/<step>/hdr/ (and steps/<step>/clients/<client>/hdr/): YCSB's .hdr interval logs
CLIENTS_DIR = "clients"  # steps/<step>/clients/<client>/: one load generator's logs of a multi-client step
STDOUT = "stdout.txt"  # a YCSB process's stdout (credentials masked)
STDERR = "stderr.txt"
WORKLOAD_PROPERTIES = "workload.properties"  # the step's workload properties (YCSB's -P), beside stdout.txt
COMMAND = "command.txt"  # the step's exact command (masked) and its release-tarball form
STUDY_TABLE = "study_table.csv"
COMPARE_CSV = "compare-{}.csv"  # `compare --save`: compare-<reference or contender>.csv
REPORT_HTML = "report.html"
REPORT_MD = "report.md"
MAX_MANIFEST_BYTES = 32 << 20  # a manifest is KiB (MiB for a study of thousands of steps): read no more
REPORT_FIGURES = "report-figures"  # the report's images as PNG files, beside report.md
LOCAL_CLIENT = "local"
ALL_CLIENTS = "all"  # the client of merged rows, when several load generators ran a step
NO_AUDIT = "none"  # a step whose audit state the suite does not control
LOAD_MIX = "load"  # the mix column of a load step
DEFAULT_WORKLOAD = "site.ycsb.workloads.CoreWorkload"

# The keys every CSV of a run folder starts with, in this order.
KEY_COLUMNS: tuple[str, ...] = (
    "run_id",
    "step",
    "phase",
    "mix",
    "workload",
    "threads",
    "audit",
    "repetition",
    "client",
)
_INT_KEYS = ("threads", "repetition")

# Parser column -> stored column: every latency column says its unit.
_LATENCY_RENAMES = {
    "min": "min_us",
    "max": "max_us",
    "avg": "avg_us",
}
_PERCENTILE = re.compile(r"^p\d+(\.\d+)?$")


def iso_utc(t: float | None) -> str | None:
    """Epoch seconds -> ``2026-12-01T05:47:05.327Z`` (None stays None)."""
    if t is None or (isinstance(t, float) and math.isnan(t)):
        return None
    return datetime.fromtimestamp(float(t), UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def epoch_of(text: str | float | None) -> float | None:
    """The inverse of :func:`iso_utc` (accepts epoch numbers too)."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return None
    if isinstance(text, int | float):
        return float(text)
    return datetime.fromisoformat(str(text).replace("Z", "+00:00")).timestamp()


def with_units(df: pd.DataFrame) -> pd.DataFrame:
    """The parser's latency columns (``p99``, ``avg``, ``max``...) under their stored names (``p99_us``)."""
    renames = {c: f"{c}_us" for c in df.columns if isinstance(c, str) and _PERCENTILE.match(c)}
    renames.update({c: new for c, new in _LATENCY_RENAMES.items() if c in df.columns})
    return df.rename(columns=renames)


def local_times_to_utc(values: pd.Series) -> pd.Series:
    """YCSB's status-line timestamps (naive local time, ``2026-12-01 07:13:16.553``) as ISO-8601 UTC."""
    import pandas as pd

    parsed = pd.to_datetime(values, errors="coerce", format="mixed")
    if parsed.isna().all():
        return pd.Series([None] * len(values), index=values.index, dtype=object)
    local = parsed.dt.tz_localize(datetime.now().astimezone().tzinfo, ambiguous="NaT", nonexistent="NaT")
    utc = local.dt.tz_convert("UTC")
    return pd.Series(
        [None if pd.isna(ts) else iso_utc(ts.timestamp()) for ts in utc], index=values.index, dtype=object
    )


# --- keys and steps --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StepKeys:
    """The key columns of one step (one client's part of it, once several clients run)."""

    run_id: str
    step: str
    phase: str  # "load" | "run" for YCSB phases; "warmup" (discarded run) and "audit" (switch) in steps.csv
    mix: str  # the mix name; "load" for a load step
    workload: str  # the YCSB workload class
    threads: int
    audit: str  # "off" | "on" | "none" (not controlled by the suite)
    repetition: int  # 1.. for measured runs; 0 for loads, warm-ups and audit switches
    client: str = LOCAL_CLIENT

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class StepRecord:
    """What happened in one step: keys, times, status, the exact command and the step's figures."""

    keys: StepKeys
    index: int
    reason: str = ""
    started_at: float | None = None
    ended_at: float | None = None
    exit_code: int | None = None
    status: str = "pending"  # pending | completed | failed | truncated | interrupted | ...
    reasons: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    argv: list[str] = field(default_factory=list)  # masked
    ycsb_cli: str = ""
    properties: dict[str, str] = field(default_factory=dict)
    audit_verified: str | None = None
    audit_detail: str | None = None
    audit_nodes: list[dict[str, Any]] | None = None  # per node of the deployment: what it reported
    throughput_ops_s: float | None = None
    runtime_ms: float | None = None
    documents: int | None = None
    discarded: bool = False
    driver_settings: dict[str, Any] | None = None  # what the binding reports it runs with (no secrets)
    figures: dict[str, Any] = field(default_factory=dict)  # server_*/client_* figures, audit detail, ...
    extra: dict[str, Any] = field(default_factory=dict)  # keys a newer ycsb-runner wrote, written back

    @property
    def label(self) -> str:
        return self.keys.step

    @property
    def duration_s(self) -> float | None:
        """Wall-clock seconds from the step's start to its end (its JVM's start included); None unfinished."""
        return self.ended_at - self.started_at if self.started_at is not None and self.ended_at else None

    def to_json(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("keys", "extra")}
        out["started_at"] = iso_utc(self.started_at)
        out["ended_at"] = iso_utc(self.ended_at)
        known = {**self.keys.as_dict(), **out}
        return {**known, **{k: v for k, v in self.extra.items() if k not in known}}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> StepRecord:
        keys = StepKeys(**{k: d[k] for k in KEY_COLUMNS})
        rest = {f.name: d[f.name] for f in fields(cls) if f.name not in ("keys", "extra") and f.name in d}
        rest["started_at"] = epoch_of(rest.get("started_at"))
        rest["ended_at"] = epoch_of(rest.get("ended_at"))
        known = {*KEY_COLUMNS, *(f.name for f in fields(cls))}
        return cls(keys=keys, **rest, extra={str(k): v for k, v in d.items() if k not in known})

    def csv_row(self) -> dict[str, Any]:
        """steps.csv: keys, then the step's outcome, then its scalar figures (no argv or properties)."""
        row: dict[str, Any] = {
            **self.keys.as_dict(),
            "index": self.index,
            "reason": self.reason,
            "started_at": iso_utc(self.started_at),
            "ended_at": iso_utc(self.ended_at),
            "duration_s": self.duration_s,
            "exit_code": self.exit_code,
            "status": self.status,
            "reasons": "; ".join(self.reasons),
            "warnings": "; ".join(self.warnings),
            "audit_verified": self.audit_verified,
            "audit_detail": self.audit_detail,
            "throughput_ops_s": self.throughput_ops_s,
            "runtime_ms": self.runtime_ms,
            "documents": self.documents,
            "discarded": self.discarded,
        }
        for k, v in self.figures.items():
            if v is None or isinstance(v, str | int | float | bool):
                row[k] = v
        return row


# --- the manifest ----------------------------------------------------------------------------------------


@dataclass
class SuiteInfo:
    """What the run's suite was, as run (after --set and --scale)."""

    name: str
    study: str | None = None
    description: str = ""
    source: str = ""
    path: str | None = None
    tags: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    scaling: dict[str, Any] = field(default_factory=dict)
    repetitions: int = 1
    order: str = "blocked"
    warmup_runs: int = 0
    audit_states: list[str] = field(default_factory=list)
    mixes: list[str] = field(default_factory=list)
    threads: list[int] = field(default_factory=list)
    recordcount: int | None = None
    templates: str = "built-in"
    extra: dict[str, Any] = field(default_factory=dict)  # keys a newer ycsb-runner wrote, written back

    def to_json(self) -> dict[str, Any]:
        known = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        return {**known, **{k: v for k, v in self.extra.items() if k not in known}}

    @classmethod
    def from_json(cls, d: dict[str, Any], where: str = "the run") -> SuiteInfo:
        for key, types in _SUITE_TYPES.items():
            if key in d and d[key] is not None and not isinstance(d[key], types):
                raise UserError(
                    f"{where} is damaged: its manifest's suite.{key} is {type(d[key]).__name__} "
                    f"{_shown(d[key])}, not {' or '.join(_TYPE_NAMES[t] for t in types)}; re-run the suite"
                )
        known = {f.name for f in fields(cls)} - {"extra"}
        extra = {str(k): v for k, v in d.items() if k not in known}
        return cls(**{k: d[k] for k in known if k in d}, extra=extra)


# the JSON types of a manifest's suite fields (None is allowed where the field has a default)
_SUITE_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,),
    "study": (str,),
    "description": (str,),
    "source": (str,),
    "path": (str,),
    "tags": (dict,),
    "notes": (list, str),  # a hand-edited manifest may hold one note as text: shown as it is
    "scaling": (dict,),
    "repetitions": (int,),
    "order": (str,),
    "warmup_runs": (int,),
    "audit_states": (list,),
    "mixes": (list,),
    "threads": (list,),
    "recordcount": (int,),
    "templates": (str,),
}


# --- the manifest's sections: named fields, and what a newer writer added kept in ``extra`` ----------------


class ManifestSection:
    """A section of ``manifest.json`` as a frozen dataclass: each key this version knows is a typed field, and
    every other key (written by a newer ycsb-runner) is kept in ``extra`` and written back on save. A known
    key of the wrong JSON type is a damaged manifest (a one-line UserError); ``null`` leaves a field unset."""

    extra: dict[str, Any]

    @classmethod
    def from_json(cls, d: Any, where: str | Path = "a manifest", name: str | None = None) -> Self:
        name = name or SECTION_NAMES.get(cls, cls.__name__)
        if not isinstance(d, dict):
            raise UserError(
                f"{where} is damaged: its manifest's {name} is {type(d).__name__} {_shown(d)}, not an "
                "object; re-run the suite"
            )
        hints = _hints(cls)
        known = {
            f.name: _typed(d[f.name], hints[f.name], where, f"{name}.{f.name}")
            for f in _own(cls)
            if f.name in d
        }
        return cls(
            **{k: v for k, v in known.items() if v is not None},
            extra={str(k): v for k, v in d.items() if k not in hints},
        )

    def to_json(self) -> dict[str, Any]:
        """The section as written: its fields in order, then the keys it was read with and does not know."""
        out = {f.name: _as_json(getattr(self, f.name)) for f in _own(type(self))}
        return {**out, **{k: v for k, v in self.extra.items() if k not in out}}


def _own(cls: type) -> list[Any]:
    return [f for f in fields(cls) if f.name != "extra"]


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    import typing

    return {k: v for k, v in typing.get_type_hints(cls).items() if k != "extra"}


def _as_json(value: Any) -> Any:
    if isinstance(value, ManifestSection):
        return value.to_json()
    if isinstance(value, list | tuple):
        return [_as_json(v) for v in value]
    return value


# the JSON types a Python type is read from (bool is not a number here, a whole number is a float)
_JSON_OF: dict[Any, tuple[type, ...]] = {str: (str,), int: (int,), float: (int, float), bool: (bool,)}


def _typed(value: Any, hint: Any, where: str | Path, name: str) -> Any:
    """*value* read from JSON as *hint* (``str | None``, ``list[CanaryLoadGenerator]``, a section...)."""
    import types
    import typing

    if hint is Any or value is None:
        return value
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return _typed(value, args[0] if len(args) == 1 else Any, where, name)
    origin = typing.get_origin(hint) or hint
    if isinstance(origin, type) and issubclass(origin, ManifestSection):
        return origin.from_json(value, where, name)
    if isinstance(origin, type) and issubclass(origin, StrEnum) and isinstance(value, str):
        return origin(value)
    if origin is list and isinstance(value, list):
        return [_typed(v, args[0], where, f"{name}[]") for v in value] if args else value
    if origin is dict and isinstance(value, dict):
        return value
    ok = _JSON_OF.get(origin)
    if ok is not None and isinstance(value, ok) and not (origin is not bool and isinstance(value, bool)):
        return value
    raise UserError(
        f"{where} is damaged: its manifest's {name} is {type(value).__name__} {_shown(value)}, not "
        f"{_TYPE_NAMES.get(origin, getattr(origin, '__name__', str(origin)))}; re-run the suite"
    )


class ServerEngine(StrEnum):
    """What answered the run's MongoDB protocol (``target.engine``)."""

    MONGODB = "mongodb"  # a mongod or mongos (MongoDB, Percona Server for MongoDB, Atlas)
    FERRETDB = "ferretdb"  # FerretDB: the embedded test server, or one given by URL
    UNKNOWN = "unknown"  # nothing recorded of it, or a name a newer ycsb-runner wrote

    @classmethod
    def _missing_(cls, value: object) -> ServerEngine:
        return cls.UNKNOWN


def server_engine(server_kind: str | None, build_info: dict[str, Any] | None) -> ServerEngine:
    """The engine of a server, from the embedded server's kind or the ``buildInfo`` it answered."""
    build = build_info or {}
    if server_kind == "ferretdb" or build.get("ferretdb") or build.get("ferretdbVersion"):
        return ServerEngine.FERRETDB
    return ServerEngine.MONGODB if server_kind or build.get("version") else ServerEngine.UNKNOWN


@dataclass(frozen=True)
class BuildInfo(ManifestSection):
    """``target.build_info``: what the server's ``buildInfo`` said."""

    version: str | None = None
    ferretdb: str | None = None  # FerretDB's own version ("unknown" when it does not say)
    modules: list[str] = field(default_factory=list)  # "enterprise" ...
    psmdb: str | None = None  # Percona Server for MongoDB's version
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class TargetRecord(ManifestSection):
    """``target``: the server the run measured."""

    embedded: bool = False  # ycsb-runner's embedded test server
    server_kind: str | None = None  # the embedded server's kind ("ferretdb"); null for a server given by URL
    server_version: str | None = None  # the embedded server's description, else buildInfo's version
    build_info: BuildInfo = field(default_factory=BuildInfo)
    url: str = ""  # credentials masked
    engine: ServerEngine = ServerEngine.UNKNOWN  # format 3; derived from the rest for a format-2 folder
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class YcsbRecord(ManifestSection):
    """``ycsb``: the YCSB that ran the steps."""

    core: str | None = None  # core-0.17.0.jar
    binding_class: str | None = None
    binding_jar: str | None = None
    driver_jar: str | None = None
    driver_version: str | None = None
    source: str | None = None  # "maven-build" | "tarball"
    home: str | None = None
    tarball_sha256: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class JavaRecord(ManifestSection):
    """``java``: the Java that ran YCSB."""

    path: str | None = None
    version: str | None = None
    description: str | None = None  # the first line of ``java -version``
    jvm_args: list[str] = field(default_factory=list)
    class_data_archive: str | None = None  # the class-data sharing archive the JVMs started with
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class HostRecord(ManifestSection):
    """``host``: the load generator ycsb-runner ran on."""

    hostname: str = ""
    platform: str | None = None
    python: str | None = None
    cpus_logical: int | None = None
    cpus_physical: int | None = None
    memory_bytes: int | None = None
    load_avg: list[float] = field(default_factory=list)  # 1, 5 and 15 minutes, when the run ended
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolRecord(ManifestSection):
    """``tool``: the ycsb-runner that wrote the folder."""

    name: str = "ycsb-runner"
    version: str | None = None
    pid: int | None = None  # its process (``mark_abandoned`` reads it)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DriverSettingsRecord(ManifestSection):
    """``driver_settings``: the driver settings every step shares (``settings``: the binding's keys,
    ``ycsb_runner.execute.driver_settings.KEYS``, a newer binding's too) and the keys whose values differ
    between steps. In the file the settings are the object's own keys."""

    varies_by_step: list[str] = field(default_factory=list)
    error: str | None = None  # a settings line that could not be read
    settings: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # always empty: every other key is a setting

    @classmethod
    def from_json(cls, d: Any, where: str | Path = "a manifest", name: str | None = None) -> Self:
        if not isinstance(d, dict):
            return super().from_json(d, where, name)  # the one-line error
        name = name or "driver_settings"
        return cls(
            varies_by_step=_typed(d.get("varies_by_step"), list[str], where, f"{name}.varies_by_step") or [],
            error=_typed(d.get("error"), str, where, f"{name}.error"),
            settings={str(k): v for k, v in d.items() if k not in ("varies_by_step", "error")},
        )

    def to_json(self) -> dict[str, Any]:
        """The binding's keys, then ``varies_by_step``, as the runner writes them."""
        error = {"error": self.error} if self.error is not None else {}
        return {**self.settings, **error, "varies_by_step": self.varies_by_step}


@dataclass(frozen=True)
class FindmaxBound(ManifestSection):
    """``findmax.bound``: the latency bound the probes had to meet."""

    statistic: str = ""  # p99, avg ...
    limit_us: float | None = None
    label: str = "?"  # "p99 <= 10 ms"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FindmaxRecord(ManifestSection):
    """``findmax``: a ``ycsb-runner findmax`` search's parameters, its probes and what it found
    (``ycsb_runner.findmax.search.summary``)."""

    mix: str = ""
    bound: FindmaxBound = field(default_factory=FindmaxBound)
    max_error_rate: float | None = None
    threads: int = 0
    probe_s: float | None = None
    max_probes: int | None = None
    resolution_pct: float | None = None
    start_ops_s: int | None = None
    min_achieved: float | None = None
    # per probe (``ycsb_runner.findmax.search.Probe``): step, target, throughput_ops_s, latency_us,
    # worst_operation, error_rate, passed, reasons
    probes: list[dict[str, Any]] = field(default_factory=list)
    max_ops_s: float | None = None  # the highest passing target below every failing one
    lowest_failing_ops_s: float | None = None
    converged: bool = False
    done: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def config_key(self) -> list[Any]:
        """The search parameters that make runs comparable night by night (the fingerprint's part)."""
        written = self.to_json()
        keys = ("mix", "bound", "max_error_rate", "threads", "probe_s", "max_probes", "resolution_pct")
        return [written.get(k) for k in (*keys, "start_ops_s")]


@dataclass(frozen=True)
class CanaryLoadGenerator(ManifestSection):
    """One load generator's canary: YCSB's no-op BasicDB ops/s before the first step and after the last."""

    client: str = ""
    threads: int = 1
    seconds: float | None = None
    ops_s: dict[str, float | None] = field(default_factory=dict)  # "before", "after"
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CanaryHost(ManifestSection):
    """``canaries.host``: this host's CPU steal and the CPU other processes used over the run."""

    name: str = ""
    cpus: int | None = None
    seconds: float | None = None
    steal_pct: float | None = None
    others_cpu_pct: float | None = None
    why_not: str | None = None  # why a figure is missing
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CanariesRecord(ManifestSection):
    """``canaries``: what the database cannot change, measured beside the steps
    (``ycsb_runner.execute.canary.Canaries.figures``)."""

    load_generator: list[CanaryLoadGenerator] = field(default_factory=list)
    rtt_us: dict[str, float | None] = field(default_factory=dict)  # "before", "after": median ping round trip
    pings: int | None = None
    host: CanaryHost = field(default_factory=CanaryHost)
    errors: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


# the name each section has in manifest.json (its errors name it so)
SECTION_NAMES: dict[type, str] = {
    TargetRecord: "target",
    BuildInfo: "target.build_info",
    YcsbRecord: "ycsb",
    JavaRecord: "java",
    HostRecord: "host",
    ToolRecord: "tool",
    DriverSettingsRecord: "driver_settings",
    FindmaxRecord: "findmax",
    FindmaxBound: "findmax.bound",
    CanariesRecord: "canaries",
    CanaryHost: "canaries.host",
    CanaryLoadGenerator: "canaries.load_generator[]",
}


@dataclass
class Manifest:
    """``manifest.json``: the whole record of a run, self-contained (Rally's race record, pyperf's suite)."""

    run_id: str
    suite: SuiteInfo
    status: str = "running"  # running | completed | failed | interrupted | killed
    error: str | None = None
    started_at: float = field(default_factory=time.time)
    ended_at: float | None = None
    target: TargetRecord = field(default_factory=TargetRecord)
    ycsb: YcsbRecord = field(default_factory=YcsbRecord)
    java: JavaRecord = field(default_factory=JavaRecord)
    host: HostRecord = field(default_factory=HostRecord)
    audit_strategy: str | None = None
    # the caveat when the strategy's switch is not verified as auditing (``audit.unverified_audit``)
    audit_unverified: str | None = None
    #: What "audit off" measured (``AuditStrategy.baseline``): e.g. "audit: off = runtime filter that
    #: matches nothing" vs "audit disabled = restart without auditLog".
    audit_baseline: str | None = None
    plan_estimate_s: float | None = None
    driver_settings: DriverSettingsRecord | None = None  # None: no step reported settings
    steps: list[StepRecord] = field(default_factory=list)
    tool: ToolRecord = field(default_factory=ToolRecord)
    tags: dict[str, str] = field(default_factory=dict)  # ``bench --tag k=v``: server=7.0.12, sha=abc123
    #: ``ycsb-runner findmax``: the search's parameters, its probes and the found rate
    #: (``ycsb_runner.findmax.search.summary``); None for a bench run
    findmax: FindmaxRecord | None = None
    #: the canaries measured beside the steps (``ycsb_runner.execute.canary.Canaries.figures``); None when
    #: the run measured none (``--no-canaries``, or a folder written before them)
    canaries: CanariesRecord | None = None
    format_version: int = FORMAT_VERSION
    #: top-level keys a newer ycsb-runner wrote, kept and written back
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def fingerprint(self) -> str:
        """A hash of the parameters the measured steps ran with (suite, mixes, threads, properties).

        Runs with the same fingerprint form one series in the history; a changed parameter (``--set``,
        ``--scale``, an edited suite) starts a new one. Times, URLs, tags and versions are not in it.
        """
        import hashlib

        cells = sorted(
            {
                json.dumps(
                    [
                        s.keys.phase,
                        s.keys.mix,
                        s.keys.workload,
                        s.keys.threads,
                        s.keys.audit,
                        {
                            k: _without_tail(k, v)
                            for k, v in s.properties.items()
                            if self.run_id not in str(v)
                        },  # no paths
                    ],
                    sort_keys=True,
                    default=str,
                )
                for s in self.steps
                if s.keys.phase in ("load", "run")
            }
        )
        parts: list[Any] = [self.suite.name, self.suite.repetitions, cells]
        if self.findmax is not None:  # the probes' targets differ night by night; the search's bound does not
            parts.append(self.findmax.config_key())
        blob = json.dumps(parts, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def started_at_utc(self) -> str | None:
        """When the run started, as the manifest writes it (:func:`iso_utc`)."""
        return iso_utc(self.started_at)

    @property
    def ended_at_utc(self) -> str | None:
        """When the run ended, as the manifest writes it (None while it runs)."""
        return iso_utc(self.ended_at)

    def to_json(self) -> dict[str, Any]:
        known = {
            "format_version": self.format_version,
            "tool": self.tool.to_json(),
            "run_id": self.run_id,
            "status": self.status,
            "error": self.error,
            "started_at": self.started_at_utc,
            "ended_at": self.ended_at_utc,
            "suite": self.suite.to_json(),
            "target": self.target.to_json(),
            "ycsb": self.ycsb.to_json(),
            "java": self.java.to_json(),
            "host": self.host.to_json(),
            "audit_strategy": self.audit_strategy,
            "audit_unverified": self.audit_unverified,
            "audit_baseline": self.audit_baseline,
            "plan_estimate_s": self.plan_estimate_s,
            "driver_settings": self.driver_settings.to_json() if self.driver_settings is not None else None,
            "tags": self.tags,
            **({"findmax": self.findmax.to_json()} if self.findmax is not None else {}),
            **({"canaries": self.canaries.to_json()} if self.canaries is not None else {}),
            "fingerprint": self.fingerprint,
        }
        extra = {k: v for k, v in self.extra.items() if k not in known and k != "steps"}
        return {**known, **extra, "steps": [s.to_json() for s in self.steps]}

    @classmethod
    def from_json(cls, d: Any, where: Path) -> Manifest:
        if not isinstance(d, dict):
            raise UserError(f"{where} is damaged: its manifest is not a JSON object; re-run the suite")
        for key, types in _MANIFEST_TYPES.items():
            if key in d and not isinstance(d[key], types):
                raise UserError(
                    f"{where} is damaged: its manifest's {key} is {type(d[key]).__name__} "
                    f"{_shown(d[key])}, not {' or '.join(_TYPE_NAMES[t] for t in types)}; re-run the suite"
                )
        version = d.get("format_version")
        if version is None:
            raise UserError(
                f"{where} was written by an older ycsb-runner (before result format {READABLE_FORMATS[0]}); "
                "re-run the suite to get a folder this version reads"
            )
        if version not in READABLE_FORMATS:
            raise UserError(
                f"{where} has result format {version}; this ycsb-runner reads formats "
                f"{', '.join(map(str, READABLE_FORMATS))}: use the ycsb-runner version that wrote it"
            )
        d = _upgrade(d, version)

        def section(key: str, kind: type[ManifestSection]) -> Any:
            value = d.get(key)
            return kind.from_json(value, where, key) if value is not None else kind()

        def optional(key: str, kind: type[ManifestSection]) -> Any:
            value = d.get(key)  # not an object: none (as format 2 read it)
            return kind.from_json(value, where, key) if isinstance(value, dict) else None

        try:
            return cls(
                run_id=d["run_id"],
                suite=SuiteInfo.from_json(d.get("suite") or {"name": ""}, where),
                status=d.get("status", "unknown"),
                error=d.get("error"),
                started_at=epoch_of(d.get("started_at")) or 0.0,
                ended_at=epoch_of(d.get("ended_at")),
                target=section("target", TargetRecord),
                ycsb=section("ycsb", YcsbRecord),
                java=section("java", JavaRecord),
                host=section("host", HostRecord),
                audit_strategy=_typed(d.get("audit_strategy"), str | None, where, "audit_strategy"),
                audit_unverified=_typed(d.get("audit_unverified"), str | None, where, "audit_unverified"),
                audit_baseline=_typed(d.get("audit_baseline"), str | None, where, "audit_baseline"),
                plan_estimate_s=d.get("plan_estimate_s"),
                driver_settings=optional("driver_settings", DriverSettingsRecord),
                steps=[StepRecord.from_json(s) for s in d.get("steps") or []],
                tool=section("tool", ToolRecord),
                tags={str(k): str(v) for k, v in (d.get("tags") or {}).items()},
                findmax=optional("findmax", FindmaxRecord),
                canaries=optional("canaries", CanariesRecord),
                format_version=FORMAT_VERSION,
                extra={k: v for k, v in d.items() if k not in _MANIFEST_KEYS},
            )
        except (KeyError, TypeError, ValueError) as err:
            raise UserError(
                f"{where} is damaged: its manifest lacks or mangles {err}; re-run the suite"
            ) from None


def _upgrade(d: dict[str, Any], version: int) -> dict[str, Any]:
    """A manifest of an older readable format as this version writes it (the file is left as it is).

    2 -> 3: ``target.engine``, what answered (it was worked out from ``server_kind`` and ``build_info`` each
    time a report said "Not MongoDB"). 3 -> 4: each step's outcome is its ``status`` (it was ``verdict``, a
    word kept for the judgements of measured figures)."""
    if version == 2 and isinstance(d.get("target"), dict):
        target = d["target"]
        build = target.get("build_info")
        engine = server_engine(target.get("server_kind"), build if isinstance(build, dict) else None)
        d = {**d, "target": {**target, "engine": engine.value}}
    if version in (2, 3) and isinstance(d.get("steps"), list):
        d = {**d, "steps": [_renamed(s, STEP_RENAMED) if isinstance(s, dict) else s for s in d["steps"]]}
    return d


#: A step's field (and steps.csv's column) an older format named otherwise: old name -> this version's
STEP_RENAMED = {"verdict": "status"}


def _renamed(d: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """*d* with its keys renamed by *names* (old -> new), in their order; a new key already there wins."""
    return {(names[k] if k in names and names[k] not in d else k): v for k, v in d.items()}


_MANIFEST_TYPES: dict[str, tuple[type, ...]] = {
    "run_id": (str,),
    "status": (str,),
    "error": (str, type(None)),
    "tags": (dict, type(None)),
    "steps": (list, type(None)),
    **{k: (dict, type(None)) for k in ("suite", "target", "ycsb", "java", "host", "tool")},
}
# the top-level keys this version reads (``fingerprint`` is worked out again); the rest is ``Manifest.extra``
_MANIFEST_KEYS = {f.name for f in fields(Manifest)} - {"extra"} | {"fingerprint"}
_TYPE_NAMES = {
    str: "text",
    int: "a whole number",
    float: "a number",
    bool: "true or false",
    dict: "an object",
    list: "a list",
    type(None): "null",
}


def _shown(value: Any) -> str:
    return repr(value)[:40]


# --- the folder ------------------------------------------------------------------------------------------

CSV_FILES = ("steps", "summary", "operations", "timeseries", "server_metrics", "client_metrics")
# The columns every reader of a file relies on (besides the key columns, which are filled in when absent).
REQUIRED_COLUMNS: dict[str, tuple[str, ...]] = {
    "steps": ("step", "phase", "status"),
    "summary": ("step", "section", "operation", "kind", "metric", "value"),
    "operations": ("step", "operation", "kind", "operations"),
}


# operations.csv's columns that hold text; every other one is a count or a latency, read as a number (a cell
# that is not one, in a file edited or damaged by hand, reads as missing: "-" in the tables)
OPERATION_TEXT_COLUMNS = ("workload", "client", "section", "operation", "kind", "intended", "outcome", "part")
#: The CSV files of numbers and their columns of text besides the keys: every other column holds numbers, and
#: a cell of text there (a damaged or edited file) reads as missing, not as a column of text that fails the
#: first sum or comparison made with it
TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    "operations": OPERATION_TEXT_COLUMNS,
    "timeseries": (*OPERATION_TEXT_COLUMNS, "source", "label", "time"),
    "server_metrics": ("client", "time", "source", "cpu_source"),
    "client_metrics": ("client", "time"),
}


def new_run_id(suite_name: str, now: float | None = None) -> str:
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    return f"{stamp}-{re.sub(r'[^A-Za-z0-9_.-]+', '-', suite_name)}"


def normalise_keys(df: pd.DataFrame) -> pd.DataFrame:
    """Key columns as written: text keys as str, ``threads`` and ``repetition`` as int."""
    import pandas as pd

    if df.empty:
        return df
    df = df.copy()
    for k in KEY_COLUMNS:
        if k not in df:
            continue
        if k in _INT_KEYS:
            df[k] = pd.to_numeric(df[k], errors="coerce").fillna(0).astype(int)
        else:
            df[k] = df[k].astype(object).where(df[k].notna(), "").astype(str)
    return df


def whole_steps(df: pd.DataFrame) -> pd.DataFrame:
    """The rows that stand for each step as a whole: ``client=all`` (merged) where several load generators
    ran the step, the one client's rows elsewhere. Analyses that sum or average per step read these, so a
    multi-client step is neither counted twice nor averaged over its clients' percentiles."""
    if df.empty or "client" not in df or "step" not in df:
        return df
    multi = set(df.loc[df["client"] == ALL_CLIENTS, "step"])
    if not multi:
        return df
    return df[(df["client"] == ALL_CLIENTS) | ~df["step"].isin(multi)]


# the percentile the command line adds to hdrhistogram.percentiles where a suite does not list it (the
# history's p999_us series); left out of the fingerprint: a history recorded before it stays one series
TAIL_PERCENTILE = "99.9"
PERCENTILES_PROPERTY = "hdrhistogram.percentiles"


def _without_tail(key: str, value: Any) -> Any:
    """A step property as the fingerprint sees it: hdrhistogram.percentiles without TAIL_PERCENTILE."""
    if key != PERCENTILES_PROPERTY or not isinstance(value, str):
        return value
    return ",".join(p for p in value.split(",") if p.strip() != TAIL_PERCENTILE)


def add_keys(df: pd.DataFrame, keys: StepKeys) -> pd.DataFrame:
    """*df* with the key columns in front (values of *keys*) and latency columns named with their unit."""
    df = with_units(df.copy())
    for i, (k, v) in enumerate(keys.as_dict().items()):
        if k in df:
            df = df.drop(columns=k)
        df.insert(i, k, v)
    return df


class RunResult:
    """One run folder: the manifest and CSVs at the top, ``steps/<step>/`` with each step's raw logs."""

    def __init__(self, root: Path, manifest: Manifest) -> None:
        self.root = root
        self.manifest = manifest
        self._frames: dict[str, pd.DataFrame] = {}

    # --- create / load --------------------------------------------------------------------------------

    @classmethod
    def create(cls, results: Path, suite: SuiteInfo, run_id: str | None = None) -> RunResult:
        run_id = check_name(run_id or new_run_id(suite.name), "run id")
        root, n = results / run_id, 1
        while root.exists():
            n += 1
            root = results / f"{run_id}-{n}"
        try:
            (root / STEPS_DIR).mkdir(parents=True)
        except OSError as err:
            raise disk_error(root, err) from err
        return cls(root, Manifest(run_id=root.name, suite=suite))

    @classmethod
    def load(cls, path: Path | str) -> RunResult:
        """Open a run folder (UserError, one line, when it is not one or is damaged)."""
        root = Path(path)
        file = root / MANIFEST
        if not file.is_file():
            raise UserError(f"{root} is not a ycsb-runner result folder (no {MANIFEST})")
        check_inside(root, file)
        raw = read_bounded(file, MAX_MANIFEST_BYTES, "a run's manifest")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as err:
            raise UserError(
                f"{file} is damaged ({type(err).__name__}: {str(err)[:80]}); the run was cut off while "
                "writing it: re-run the suite"
            ) from None
        return cls(root, Manifest.from_json(data, file))

    # --- writing --------------------------------------------------------------------------------------

    @property
    def run_id(self) -> str:
        return self.manifest.run_id

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    @property
    def study_table_path(self) -> Path:
        return self.root / STUDY_TABLE

    def compare_path(self, other: str) -> Path:
        """``compare-<other>.csv``: this run compared with a published table or another run (``--save``)."""
        return self.root / COMPARE_CSV.format(other)

    def step_path(self, label: str) -> Path:
        """``steps/<label>/`` (not created)."""
        return self.root / STEPS_DIR / label

    def step_dir(self, label: str) -> Path:
        """``steps/<label>/``, created when missing."""
        d = self.step_path(label)
        d.mkdir(parents=True, exist_ok=True)
        return d

    def hdr_dir(self, label: str) -> Path:
        """``steps/<label>/hdr/``: a single-client step's interval logs (it may not exist)."""
        return self.step_path(label) / HDR_DIR

    def client_hdr_dirs(self, label: str) -> dict[str, Path]:
        """client -> its ``hdr/`` folder in step *label*: ``clients/<name>/hdr`` of a multi-client step,
        else ``{LOCAL_CLIENT: steps/<label>/hdr}``."""
        step = self.step_path(label)
        clients = sorted(p for p in (step / CLIENTS_DIR).glob("*") if p.is_dir())
        return {c.name: c / HDR_DIR for c in clients} or {LOCAL_CLIENT: step / HDR_DIR}

    def hdr_dirs(self) -> list[Path]:
        """Every single-client step's ``hdr/`` folder that exists, in step order."""
        return sorted((self.root / STEPS_DIR).glob(f"*/{HDR_DIR}"))

    def save_manifest(self) -> None:
        atomic_write_json(self.manifest_path, _json_safe(self.manifest.to_json()), within=self.root)

    def save_status(self, status: str, error: str | None) -> bool:
        """Set the saved manifest's status and error when the full manifest cannot be written (a full disk):
        the last saved manifest, compacted, written atomically or else over the old file's own bytes (the
        new text is no longer). True when saved."""
        path = self.manifest_path
        try:
            check_inside(self.root, path)
            old = path.read_bytes()
            doc = json.loads(old)
        except (OSError, ValueError, UserError):
            return False
        if not isinstance(doc, dict):
            return False
        doc.update(status=status, error=error, ended_at=iso_utc(time.time()))
        data = json.dumps(_json_safe(doc), separators=(",", ":"), default=str).encode() + b"\n"
        try:
            atomic_write_bytes(path, data, within=self.root)
            return True
        except UserError:
            pass
        if len(data) > len(old):
            return False
        try:  # no room for a second copy: reuse the old file's blocks
            with open(path, "r+b") as f:
                f.write(data)
                f.truncate()
            return True
        except OSError:
            return False

    def write_frame(self, name: str, df: pd.DataFrame) -> Path:
        """Write ``<name>.csv``; key columns first (an empty frame still gets its header)."""
        import pandas as pd

        if df.empty and not len(df.columns):
            df = pd.DataFrame(columns=list(KEY_COLUMNS))
        missing = [k for k in KEY_COLUMNS if k not in df.columns]
        if missing:
            raise ValueError(f"{name}.csv lacks key columns {missing}")
        df = df[list(KEY_COLUMNS) + [c for c in df.columns if c not in KEY_COLUMNS]]
        path = self.root / f"{name}.csv"
        atomic_write_csv(path, df, within=self.root)
        self._frames.pop(name, None)
        return path

    def save(self, frames: dict[str, pd.DataFrame]) -> None:
        """The manifest, steps.csv and the given frames, each file atomically."""
        import pandas as pd

        self.save_manifest()
        self.write_frame("steps", pd.DataFrame([s.csv_row() for s in self.manifest.steps]))
        for name, df in frames.items():
            self.write_frame(name, df)

    # --- reading --------------------------------------------------------------------------------------

    def check_steps(self) -> None:
        """UserError (one line) when the folder has no ``steps.csv``: no table or report can be made of it."""
        path = self.root / "steps.csv"
        if not path.is_file():
            status = (
                f" (its manifest says {self.manifest.status})" if self.manifest.status != "completed" else ""
            )
            raise UserError(
                f"{self.root} has no {path.name}{status}: the run recorded no step or the file was "
                "removed; restore it from a copy of the run, or re-run the suite"
            )

    def frame(self, name: str) -> pd.DataFrame:
        """``<name>.csv`` with its keys typed (empty frame when the file is absent or empty); UserError when
        the file lacks a column the analyses need (``REQUIRED_COLUMNS``: it was edited or cut off)."""
        import pandas as pd

        if name not in self._frames:
            path = self.root / f"{name}.csv"
            needed = REQUIRED_COLUMNS.get(name, ())
            if not path.is_file() or path.stat().st_size == 0:
                df = pd.DataFrame(columns=list(dict.fromkeys([*KEY_COLUMNS, *needed])))
            else:
                check_inside(self.root, path)
                try:
                    df = pd.read_csv(path, keep_default_na=False, na_values=[""], low_memory=False)
                except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
                    said = " ".join(str(err).split())[:80]  # pandas' message spans lines
                    raise UserError(f"{path} is damaged ({said}); re-run the suite") from None
                if name == "steps":  # an older format's names (read as this version names them)
                    df = df.rename(columns={k: v for k, v in STEP_RENAMED.items() if v not in df.columns})
                missing = [c for c in needed if c not in df.columns]
                if missing:
                    raise UserError(
                        f"{path} is damaged: no {', '.join(missing)} column; restore the file from the run "
                        "(or re-run the suite)"
                    )
            df = normalise_keys(df)
            if name in TEXT_COLUMNS:
                from pandas.api.types import is_numeric_dtype

                text = {*KEY_COLUMNS, *TEXT_COLUMNS[name]}
                for col in [c for c in df.columns if c not in text and not is_numeric_dtype(df[c])]:
                    df[col] = pd.to_numeric(df[col], errors="coerce")
            self._frames[name] = df
        return self._frames[name]

    @property
    def steps(self) -> pd.DataFrame:
        return self.frame("steps")

    @property
    def operations(self) -> pd.DataFrame:
        return self.frame("operations")

    @property
    def whole_operations(self) -> pd.DataFrame:
        """operations.csv's rows that stand for each step as a whole (:func:`whole_steps`)."""
        return whole_steps(self.operations)

    @property
    def summary(self) -> pd.DataFrame:
        return self.frame("summary")

    @property
    def timeseries(self) -> pd.DataFrame:
        return self.frame("timeseries")

    @property
    def server_metrics(self) -> pd.DataFrame:
        return self.frame("server_metrics")

    @property
    def client_metrics(self) -> pd.DataFrame:
        return self.frame("client_metrics")

    @property
    def suite_name(self) -> str:
        return self.manifest.suite.name


def mark_abandoned(results: Path, hostname: str) -> list[Path]:
    """Runs under *results* whose manifest still says ``running`` although the ycsb-runner that wrote it, on
    this host, no longer runs (SIGKILL, a power cut): mark them ``killed``; return their folders."""
    import os

    import psutil

    marked = []
    for path in sorted(results.glob(f"*/{MANIFEST}")) if results.is_dir() else []:
        if path.parent.is_symlink():  # results/latest
            continue
        try:
            doc = json.loads(read_bounded(path, MAX_MANIFEST_BYTES, "a run's manifest"))
        except (ValueError, UserError):
            continue
        if not isinstance(doc, dict) or doc.get("status") != "running":
            continue
        try:
            tool = ToolRecord.from_json(doc.get("tool") or {}, path, "tool")
            host = HostRecord.from_json(doc.get("host") or {}, path, "host")
        except UserError:  # damaged: not ours to mark
            continue
        pid = tool.pid
        if pid is None or host.hostname != hostname:
            continue
        if pid == os.getpid() or psutil.pid_exists(pid):
            continue
        error = "ycsb-runner stopped without finishing (killed?); steps after the last saved one are missing"
        if RunResult(path.parent, Manifest(run_id=path.parent.name, suite=SuiteInfo(name=""))).save_status(
            "killed", error
        ):
            marked.append(path.parent)
    return marked


def _json_safe(obj: Any) -> Any:
    """NaN/inf are not JSON: store them as null; numpy scalars as Python numbers."""
    np = sys.modules.get("numpy")  # not loaded: obj cannot be a numpy scalar
    if np is not None and isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_safe(v) for v in obj]
    return obj


# --- the columns of each file (RESULTS.md is generated from this) -----------------------------------------

"""Pure functions that turn ``serverStatus`` samples into per-run figures and a per-interval time series.

A sample keeps only flattened numeric fields (``"opcounters.insert"``, ``"metrics.commands.find.total"``,
``"proc.cpu_s"`` ...). Counters are cumulative, so every figure is a delta between samples:

* rates: ``Δcounter / Δt`` with Δt from the server's ``uptimeMillis`` (client clock if absent);
  ``command`` minus the sampler's own polls;
* average response times: ``ΔopLatencies.<kind>.latency / ΔopLatencies.<kind>.ops`` (µs);
* CPU: ``Δ(extra_info.user_time_us + system_time_us) / Δt`` as % of one core (``cpu_core_pct``) and
  divided by the cores available to the process, ``hostInfo.system.numCoresAvailableToProcess``
  (cpusets, containers; ``numCores`` only when the server does not report it) (``cpu_pct``); psutil
  process times when extra_info is absent;
* on ``mongos`` (``serverStatus.process``), ``opcounters.command`` also counts insert/update/delete
  (SERVER-71281): the command rate is reported without them, and a note says so.

A figure the server does not report is NaN and named in ``unavailable`` — never 0. FerretDB has no
``opcounters``; its ``metrics.commands.<cmd>.total`` stand in, and ``source`` says so.
Intervals across a server restart (uptime going back, pid change, counters going down) are skipped.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

NAN = float("nan")

OPS = ("insert", "query", "update", "delete", "getmore", "command")
CRUD_OPS = ("insert", "query", "update", "delete", "getmore")
LATENCY_KINDS = ("reads", "writes", "commands")

SOURCE_OPCOUNTERS = "opcounters"
SOURCE_FERRETDB = "ferretdb.metrics.commands"
CPU_EXTRA_INFO = "extra_info"
CPU_PSUTIL = "psutil"
#: Set (1.0) in a sample's fields when ``serverStatus.process`` is ``mongos``.
MONGOS_FIELD = "process.mongos"
MONGOS_WRITES_IN_COMMAND = ("insert", "update", "delete")

# FerretDB command name -> the opcounters field it stands in for; every other command counts as "command".
FERRETDB_OP_OF = {
    "insert": "insert",
    "find": "query",
    "update": "update",
    "delete": "delete",
    "getMore": "getmore",
}

WT_CACHE_BYTES = "bytes currently in the cache"
WT_CACHE_DIRTY = "tracked dirty bytes in the cache"
WT_CACHE_MAX = "maximum bytes configured"
WT_CACHE_KEYS = (
    WT_CACHE_BYTES,
    WT_CACHE_DIRTY,
    WT_CACHE_MAX,
    "pages read into cache",
    "pages written from cache",
)

_SCALAR_PATHS = (
    "pid",
    "uptimeMillis",
    *(f"opcounters.{op}" for op in OPS),
    *(f"opLatencies.{k}.{m}" for k in LATENCY_KINDS for m in ("latency", "ops")),
    "extra_info.user_time_us",
    "extra_info.system_time_us",
    "connections.current",
    "connections.available",
    "connections.active",
    "connections.totalCreated",
    "mem.resident",
    "network.bytesIn",
    "network.bytesOut",
    "network.numRequests",
    *(f"metrics.document.{k}" for k in ("inserted", "returned", "updated", "deleted")),
)

FIGURES = (
    *(f"{op}_per_s" for op in OPS),
    "ops_per_s",
    "reads_avg_rt_us",
    "writes_avg_rt_us",
    "commands_avg_rt_us",
    "cpu_pct",
    "cpu_core_pct",
    "connections_current",
    "wt_cache_bytes",
    "wt_cache_dirty_bytes",
    "wt_cache_max_bytes",
)


@dataclass(frozen=True)
class ServerSample:
    """One poll: client wall clock ``t``, client ``mono`` clock, and the flattened numeric fields.

    ``own_commands_before`` is how many commands the sampler had sent before this poll's serverStatus.
    """

    t: float
    mono: float
    own_commands_before: int
    fields: Mapping[str, float]


@dataclass(frozen=True)
class ServerFigures:
    """Per-run server figures over a window of samples (NaN = not reported or not computable)."""

    duration_s: float
    n_samples: int
    n_intervals: int
    own_commands: int
    source: str
    cpu_source: str
    insert_per_s: float
    query_per_s: float
    update_per_s: float
    delete_per_s: float
    getmore_per_s: float
    command_per_s: float
    ops_per_s: float
    reads_avg_rt_us: float
    writes_avg_rt_us: float
    commands_avg_rt_us: float
    cpu_pct: float
    cpu_core_pct: float
    connections_current: float
    wt_cache_bytes: float
    wt_cache_dirty_bytes: float
    wt_cache_max_bytes: float
    unavailable: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        """A flat row for a CSV: ``unavailable`` and ``notes`` joined with ``;``."""
        row = asdict(self)
        row["unavailable"] = ";".join(self.unavailable)
        row["notes"] = ";".join(self.notes)
        return row


def _get_path(doc: Mapping[str, Any], path: str) -> Any:
    cur: Any = doc
    for part in path.split("."):
        if not isinstance(cur, Mapping) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    return None


def extract_server_fields(doc: Mapping[str, Any]) -> dict[str, float]:
    """Flatten the numeric fields the formulas need from a ``serverStatus`` reply (absent ones left out)."""
    out: dict[str, float] = {}
    for path in _SCALAR_PATHS:
        v = _num(_get_path(doc, path))
        if v is not None:
            out[path] = v
    if doc.get("process") == "mongos":
        out[MONGOS_FIELD] = 1.0
    local_time = doc.get("localTime")
    if isinstance(local_time, datetime):  # pymongo gives naive UTC datetimes unless tz_aware
        if local_time.tzinfo is None:
            local_time = local_time.replace(tzinfo=UTC)
        out["localTime"] = local_time.timestamp()
    out.update(_cache_fields(_get_path(doc, "wiredTiger.cache")))
    out.update(_command_totals(_get_path(doc, "metrics.commands")))
    return out


def _cache_fields(cache: Any) -> dict[str, float]:
    """``wiredTiger.cache``'s numeric figures the formulas read, under their dotted paths."""
    if not isinstance(cache, Mapping):
        return {}
    values = {key: _num(cache.get(key)) for key in WT_CACHE_KEYS}
    return {f"wiredTiger.cache.{key}": v for key, v in values.items() if v is not None}


def _command_totals(commands: Any) -> dict[str, float]:
    """``metrics.commands.<name>.total`` of every command ``serverStatus`` counts."""
    if not isinstance(commands, Mapping):
        return {}
    totals = {
        name: _num(stats.get("total")) for name, stats in commands.items() if isinstance(stats, Mapping)
    }
    return {f"metrics.commands.{name}.total": v for name, v in totals.items() if v is not None}


#: Where the server's core count came from (``host_cores``): the first is what CPU % should divide by.
CORES_AVAILABLE = "hostInfo.system.numCoresAvailableToProcess"
CORES_ALL_NOT_REPORTED = (
    "hostInfo.system.numCores: the server does not report numCoresAvailableToProcess (older servers, "
    "FerretDB)"
)
CORES_ALL_UNREADABLE = (
    "hostInfo.system.numCores: the server reports numCoresAvailableToProcess = -1 (unreadable)"
)


def host_cores(host_info: Mapping[str, Any] | None) -> tuple[int | None, str]:
    """(cores, where from) for CPU %: ``hostInfo.system.numCoresAvailableToProcess`` (cpuset / affinity;
    the manual's hostInfo page documents it, and -1 when the system call behind it fails; not every server
    version reports it, FerretDB does not), else ``system.numCores`` (all logical CPUs of the host, which
    understates the CPU % of a server confined to fewer), else (None, ""). Pure."""
    if not host_info:
        return None, ""
    available = _num(_get_path(host_info, "system.numCoresAvailableToProcess"))
    if available and available > 0:
        return int(available), CORES_AVAILABLE
    total = _num(_get_path(host_info, "system.numCores"))
    if total and total > 0:
        return int(total), CORES_ALL_UNREADABLE if available is not None else CORES_ALL_NOT_REPORTED
    return None, ""


def host_num_cores(host_info: Mapping[str, Any] | None) -> int | None:
    """The cores the server process may use (``host_cores`` without where they came from)."""
    return host_cores(host_info)[0]


def make_sample(
    doc: Mapping[str, Any],
    *,
    t: float,
    mono: float,
    own_commands_before: int,
    proc_cpu_s: float | None = None,
    proc_rss_bytes: float | None = None,
) -> ServerSample:
    """Build a sample from a ``serverStatus`` reply plus optional psutil figures of the server process."""
    fields = extract_server_fields(doc)
    if proc_cpu_s is not None:
        fields["proc.cpu_s"] = float(proc_cpu_s)
    if proc_rss_bytes is not None:
        fields["proc.rss_bytes"] = float(proc_rss_bytes)
    return ServerSample(t=t, mono=mono, own_commands_before=own_commands_before, fields=fields)


# ----------------------------------------------------------------------------------------------------------
# interval deltas


def _op_counts(fields: Mapping[str, float], source: str) -> dict[str, float]:
    if source == SOURCE_OPCOUNTERS:
        return {op: fields.get(f"opcounters.{op}", 0.0) for op in OPS}
    counts = dict.fromkeys(OPS, 0.0)
    prefix, suffix = "metrics.commands.", ".total"
    for key, value in fields.items():
        if key.startswith(prefix) and key.endswith(suffix):
            name = key[len(prefix) : -len(suffix)]
            counts[FERRETDB_OP_OF.get(name, "command")] += value
    return counts


def _has_ferretdb_commands(fields: Mapping[str, float]) -> bool:
    return any(k.startswith("metrics.commands.") for k in fields)


def _counter_source(f0: Mapping[str, float], f1: Mapping[str, float]) -> str | None:
    if all(f"opcounters.{op}" in f0 and f"opcounters.{op}" in f1 for op in OPS):
        return SOURCE_OPCOUNTERS
    if _has_ferretdb_commands(f0) or _has_ferretdb_commands(f1):
        return SOURCE_FERRETDB
    return None


def _delta(f0: Mapping[str, float], f1: Mapping[str, float], key: str) -> float | None:
    if key in f0 and key in f1:
        return f1[key] - f0[key]
    return None


@dataclass
class _Deltas:
    """Raw deltas of one interval (or sums over several)."""

    dt_s: float = 0.0
    dt_client_s: float = 0.0
    own: int = 0
    mongos: bool = False
    source: str | None = None
    counts: dict[str, float] = field(default_factory=dict)
    lat: dict[str, float] = field(default_factory=dict)  # kind -> Δlatency µs
    lat_ops: dict[str, float] = field(default_factory=dict)
    cpu_s: float | None = None
    cpu_source: str | None = None

    def add(self, other: _Deltas) -> None:
        self.dt_s += other.dt_s
        self.dt_client_s += other.dt_client_s
        self.own += other.own
        self.mongos = self.mongos or other.mongos
        self.source = _merge_label(self.source, other.source)
        for src, dst in ((other.counts, self.counts), (other.lat, self.lat), (other.lat_ops, self.lat_ops)):
            for k, v in src.items():
                dst[k] = dst.get(k, 0.0) + v
        if other.cpu_s is not None:
            self.cpu_s = (self.cpu_s or 0.0) + other.cpu_s
            self.cpu_source = _merge_label(self.cpu_source, other.cpu_source)


def _merge_label(a: str | None, b: str | None) -> str | None:
    if a is None or a == b:
        return b if a is None else a
    if b is None:
        return a
    return "+".join(sorted(set(a.split("+")) | set(b.split("+"))))


def _is_reset(s0: ServerSample, s1: ServerSample) -> bool:
    f0, f1 = s0.fields, s1.fields
    up = _delta(f0, f1, "uptimeMillis")
    if up is not None and up < 0:
        return True
    pid = _delta(f0, f1, "pid")
    return pid is not None and pid != 0


def interval_deltas(s0: ServerSample, s1: ServerSample) -> _Deltas | None:
    """Deltas between two consecutive samples, or None when the server restarted in between."""
    if _is_reset(s0, s1):
        return None
    f0, f1 = s0.fields, s1.fields
    d = _Deltas()
    up = _delta(f0, f1, "uptimeMillis")
    d.dt_client_s = s1.mono - s0.mono
    d.dt_s = up / 1000.0 if up is not None and up > 0 else d.dt_client_s
    if d.dt_s <= 0:
        return None
    d.own = s1.own_commands_before - s0.own_commands_before
    d.mongos = MONGOS_FIELD in f0 or MONGOS_FIELD in f1
    d.source = _counter_source(f0, f1)
    if d.source is not None:
        c0, c1 = _op_counts(f0, d.source), _op_counts(f1, d.source)
        d.counts = {op: c1[op] - c0[op] for op in OPS}
        if any(v < 0 for v in d.counts.values()):
            return None
    for kind in LATENCY_KINDS:
        dl = _delta(f0, f1, f"opLatencies.{kind}.latency")
        dn = _delta(f0, f1, f"opLatencies.{kind}.ops")
        if dl is not None and dn is not None:
            d.lat[kind], d.lat_ops[kind] = dl, dn
    du = _delta(f0, f1, "extra_info.user_time_us")
    ds = _delta(f0, f1, "extra_info.system_time_us")
    dp = _delta(f0, f1, "proc.cpu_s")
    if du is not None and ds is not None:
        d.cpu_s, d.cpu_source = (du + ds) / 1e6, CPU_EXTRA_INFO
    elif dp is not None and d.dt_client_s > 0:
        # psutil times go with the client clock: rescale so that cpu_s / dt_s is the psutil CPU share
        d.cpu_s, d.cpu_source = dp * d.dt_s / d.dt_client_s, CPU_PSUTIL
    return d


# ----------------------------------------------------------------------------------------------------------
# figures


def _ratio(num: float | None, den: float | None) -> float:
    if num is None or den is None or den == 0 or math.isnan(num) or math.isnan(den):
        return NAN
    return num / den


def _level(samples: Sequence[ServerSample], key: str, how: str) -> float:
    values = [s.fields[key] for s in samples if key in s.fields]
    if not values:
        return NAN
    if how == "last":
        return values[-1]
    return sum(values) / len(values)


def _figures_from(d: _Deltas | None, window: Sequence[ServerSample], num_cores: int | None) -> dict[str, Any]:
    """Figures from summed deltas plus level fields of the samples in the window."""
    out: dict[str, Any] = dict.fromkeys(FIGURES, NAN)
    unavailable: list[str] = []
    notes: list[str] = []
    _rates(out, unavailable, d)
    _latencies(out, unavailable, notes, d)
    if d is not None and d.mongos and d.source == SOURCE_OPCOUNTERS:
        notes.append(
            "mongos: opcounters.command counts insert/update/delete too; command_per_s excludes them"
        )
    _cpu(out, unavailable, d, num_cores)
    levels = (
        ("connections_current", "connections.current", "last"),
        ("wt_cache_bytes", f"wiredTiger.cache.{WT_CACHE_BYTES}", "mean"),
        ("wt_cache_dirty_bytes", f"wiredTiger.cache.{WT_CACHE_DIRTY}", "mean"),
        ("wt_cache_max_bytes", f"wiredTiger.cache.{WT_CACHE_MAX}", "last"),
    )
    for name, key, how in levels:
        out[name] = _level(window, key, how)
        if math.isnan(out[name]):
            unavailable.append(name)
    out["source"] = (d.source if d is not None else None) or ""
    out["cpu_source"] = (d.cpu_source if d is not None else None) or ""
    out["unavailable"] = tuple(n for n in FIGURES if n in unavailable)
    out["notes"] = tuple(notes)
    return out


def _rates(out: dict[str, Any], unavailable: list[str], d: _Deltas | None) -> None:
    """Per-second operation counts (the server's own commands and, on mongos, its writes taken out)."""
    if d is None or d.source is None:
        unavailable += [f"{op}_per_s" for op in OPS] + ["ops_per_s"]
        return
    for op in OPS:
        count = d.counts.get(op, 0.0)
        if op == "command":
            if d.mongos and d.source == SOURCE_OPCOUNTERS:
                count -= sum(d.counts.get(w, 0.0) for w in MONGOS_WRITES_IN_COMMAND)
            count = max(count - d.own, 0.0)
        out[f"{op}_per_s"] = count / d.dt_s
    out["ops_per_s"] = sum(d.counts.get(op, 0.0) for op in CRUD_OPS) / d.dt_s


def _latencies(out: dict[str, Any], unavailable: list[str], notes: list[str], d: _Deltas | None) -> None:
    """The server's average response time per latency kind."""
    for kind in LATENCY_KINDS:
        name = f"{kind}_avg_rt_us"
        if d is None or kind not in d.lat:
            unavailable.append(name)
        else:
            out[name] = _ratio(d.lat[kind], d.lat_ops[kind])
            if d.lat_ops[kind] == 0:
                notes.append(f"no {kind} ops: {name} is n/a")


def _cpu(out: dict[str, Any], unavailable: list[str], d: _Deltas | None, num_cores: int | None) -> None:
    """The server's CPU in % of one core and in % of the cores it may use."""
    if d is None or d.cpu_s is None:
        unavailable += ["cpu_core_pct", "cpu_pct"]
        return
    out["cpu_core_pct"] = 100.0 * d.cpu_s / d.dt_s
    if num_cores:
        out["cpu_pct"] = out["cpu_core_pct"] / num_cores
    else:
        unavailable.append("cpu_pct")


def _window(
    samples: Iterable[ServerSample], t_start: float | None, t_end: float | None
) -> list[ServerSample]:
    chosen = [s for s in samples if (t_start is None or s.t >= t_start) and (t_end is None or s.t <= t_end)]
    return sorted(chosen, key=lambda s: s.mono)


def server_figures(
    samples: Iterable[ServerSample],
    num_cores: int | None,
    *,
    t_start: float | None = None,
    t_end: float | None = None,
) -> ServerFigures:
    """Per-run figures from the samples whose client time ``t`` lies in ``[t_start, t_end]``.

    Rates and response times are summed over consecutive sample pairs (skipping restarts), so with no
    restart they equal ``(last - first) / Δt``. WiredTiger cache bytes/dirty are means over the window,
    connections and the configured cache maximum the last value.
    """
    window = _window(samples, t_start, t_end)
    total: _Deltas | None = None
    n_intervals = skipped = 0
    for s0, s1 in zip(window, window[1:], strict=False):
        d = interval_deltas(s0, s1)
        if d is None:
            skipped += 1
            continue
        n_intervals += 1
        if total is None:
            total = d
        else:
            total.add(d)
    figs = _figures_from(total, window, num_cores)
    notes = list(figs.pop("notes"))
    if len(window) < 2:
        notes.append(f"{len(window)} sample(s) in the window: rates need at least 2")
    if skipped:
        notes.append(f"{skipped} interval(s) skipped (server restart or counter reset)")
    return ServerFigures(
        duration_s=total.dt_s if total is not None else NAN,
        n_samples=len(window),
        n_intervals=n_intervals,
        own_commands=total.own if total is not None else 0,
        notes=tuple(notes),
        **figs,
    )


def server_time_series(samples: Iterable[ServerSample], num_cores: int | None) -> pd.DataFrame:
    """One row per interval between consecutive samples, for plots.

    Columns: ``t`` (client epoch s at the interval end), ``elapsed_s`` (since the first sample),
    ``dt_s``, every name in ``FIGURES``, ``source``, ``cpu_source``. Restart intervals are left out.
    Level figures (connections, cache) are the values of the interval's end sample.
    """
    ordered = _window(samples, None, None)
    rows = []
    for s0, s1 in zip(ordered, ordered[1:], strict=False):
        d = interval_deltas(s0, s1)
        if d is None:
            continue
        figs = _figures_from(d, [s1], num_cores)
        figs.pop("notes")
        figs.pop("unavailable")
        rows.append({"t": s1.t, "elapsed_s": s1.mono - ordered[0].mono, "dt_s": d.dt_s, **figs})
    columns = ["t", "elapsed_s", "dt_s", *FIGURES, "source", "cpu_source"]
    return pd.DataFrame(rows, columns=columns)


def samples_frame(samples: Iterable[ServerSample]) -> pd.DataFrame:
    """The raw samples as a frame: ``t``, ``mono``, ``own_commands_before`` and one column per field."""
    rows = [
        {"t": s.t, "mono": s.mono, "own_commands_before": s.own_commands_before, **s.fields} for s in samples
    ]
    return pd.DataFrame(rows)

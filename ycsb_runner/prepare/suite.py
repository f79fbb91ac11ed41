"""Suites as data: a TOML file describing a benchmark matrix, loaded, overridden, scaled and validated.

A suite is a dataset, workload mixes, thread counts, run length, measurement settings, MongoDB URL options,
audit states, repetitions and order. ``load_suite`` returns a frozen :class:`Suite` or raises
:class:`SuiteError` with one line naming the file, line and key at fault. The file format is documented in
``ycsb_runner/suites/README.md``; the built-in suites live next to it.
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import math
import re
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ycsb_runner.errors import UserError
from ycsb_runner.operations import MIX_OPS, OP_NAMES
from ycsb_runner.paths import SAFE_NAME, suites_dir
from ycsb_runner.safe.files import read_bounded
from ycsb_runner.safe.secrets import check_option_escapes, mask_override
from ycsb_runner.studies import STUDIES

DISTRIBUTIONS = ("uniform", "zipfian", "latest", "hotspot", "sequential", "exponential")
MEASUREMENT_TYPES = (
    "hdrhistogram",
    "histogram",
    "timeseries",
    "raw",
    "hdrhistogram+histogram",
    "hdrhistogram+raw",
)
AUDIT_STATES = ("off", "on")
INT_MAX = 2**31 - 1  # YCSB parses operationcount with Integer.parseInt


class SuiteError(UserError):
    """A suite file or override that cannot be used; the message names the file/line/key."""


# --- schema ---------------------------------------------------------------------------------------------
# The dataclasses below are the schema: a section's keys are its dataclass's fields, their TOML type comes
# from the field's annotation (tuple -> array, dict -> table) and their default from the field's default.
# A field with ``metadata={"toml": None}`` is not read from the file; ``{"key": ...}`` names its TOML key;
# ``{"nested": True}`` (and a dataclass-typed field) is a table of its own, built by ``_build``.

DRIVER_DEFAULTS = ("stock", "driver")

# Bare names accepted by --set, and the dotted path they stand for.
SHORTCUTS: dict[str, str] = {
    "size": "size",
    "repetitions": "repetitions",
    "order": "order",
    "warmup_runs": "warmup_runs",
    "warmup_s": "warmup_s",
    "estimated_throughput": "estimated_throughput",
    "recordcount": "dataset.recordcount",
    "fieldcount": "dataset.fieldcount",
    "fieldlength": "dataset.fieldlength",
    "insertorder": "dataset.insertorder",
    "load_threads": "dataset.load_threads",
    "reload": "dataset.reload",
    "threads": "run.threads",
    "target": "run.target",
    "operationcount": "run.operationcount",
    "maxexecutiontime": "run.maxexecutiontime",
    "status_interval": "run.status_interval",
    "measurementtype": "measurement.type",
    "measurement.interval": "measurement.interval",
    "audit": "audit.states",
    "audit_strategy": "audit.strategy",
    "mixes": "mixes",
}


@dataclass(frozen=True)
class Mix:
    name: str
    read: float = 0.0
    update: float = 0.0
    insert: float = 0.0
    scan: float = 0.0
    readmodifywrite: float = 0.0
    requestdistribution: str = "uniform"
    audit_ops: tuple[str, ...] = ()
    properties: dict[str, str] = field(default_factory=dict)
    description: str = ""

    def proportions(self) -> dict[str, float]:
        return {op: getattr(self, op) for op in MIX_OPS}

    @property
    def inserts(self) -> bool:
        return self.insert > 0


@dataclass(frozen=True)
class Dataset:
    recordcount: int
    fieldcount: int = 10
    fieldlength: int = 100
    insertorder: str = "hashed"
    load_threads: int = 1
    load_target: int = 0
    reload: str = "auto"  # auto | always | never
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunSettings:
    threads: tuple[int, ...] = (1,)
    target: int = 0
    operationcount: int | None = None
    maxexecutiontime: int | None = None
    status_interval: int = 10


@dataclass(frozen=True)
class Measurement:
    type: str = "hdrhistogram"
    interval: str = "op"
    percentiles: tuple[float, ...] = (95.0, 99.0)
    hdr_fileoutput: bool = False


@dataclass(frozen=True)
class MongoSettings:
    url_options: dict[str, str] = field(default_factory=dict)
    table: str = "usertable"
    batchsize: int = 1
    upsert: bool = False
    # "stock": the defaults of the Java driver 3.8 in YCSB 0.17.0's stock binding (retryable writes/reads off,
    # unthrottled connection set-up) where the URL is silent; "driver": the 5.x driver's own defaults.
    driver_defaults: str = "stock"


@dataclass(frozen=True)
class AuditSettings:
    states: tuple[str, ...] = ()
    strategy: str | None = None
    namespace_only: bool = True
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ClientSettings:
    """``[clients]``: the load generators (``local``, ``host``, ``user@host:port``, ssh aliases)."""

    hosts: tuple[str, ...] = ()  # empty: this machine alone (``bench --client`` overrides)
    ssh_config: str = ""  # an ssh config file instead of ~/.ssh/config (``ssh -F``)
    warmup_s: float | None = None  # seconds cut from each client's start of a run; None: the suite's warmup_s


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    dataset: Dataset
    run: RunSettings
    measurement: Measurement
    mongodb: MongoSettings
    audit: AuditSettings
    mixes: tuple[Mix, ...] = field(metadata={"key": "mix", "nested": True})  # [[mix]] tables
    repetitions: int = 1
    order: str = "blocked"  # blocked | interleaved
    warmup_runs: int = 0
    #: Seconds cut from the start of every run step's measurement (each client's own start), before the
    #: clients are merged; single-client runs too (they then write HDR interval logs). ``[clients]
    #: warmup_s`` overrides it.
    warmup_s: float = 0.0
    estimated_throughput: float = 5000.0
    properties: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    source: str = ""
    size: str | None = None
    sizes: tuple[str, ...] = field(default=(), metadata={"toml": dict, "nested": True})  # [sizes.<name>]
    path: str = field(default="", metadata={"toml": None})
    scale: float = field(default=1.0, metadata={"toml": None})
    overrides: tuple[str, ...] = field(default=(), metadata={"toml": None})
    study: str | None = None  # the published study it reproduces (``ycsb_runner.studies``)
    clients: ClientSettings = field(default_factory=ClientSettings)  # [clients]

    @property
    def effective_warmup_s(self) -> float:
        """``[clients] warmup_s`` when set, else the suite-wide ``warmup_s``."""
        return float(self.warmup_s if self.clients.warmup_s is None else self.clients.warmup_s)

    def describe_scaling(self) -> dict[str, Any]:
        """Scale, ``--set`` overrides (secret values masked: this is stored and shown) and size."""
        from ycsb_runner.safe.secrets import mask_override

        overrides = [mask_override(o) for o in self.overrides]
        return {"scale": self.scale, "overrides": overrides, "size": self.size}


def _toml_type(hint: Any) -> type:
    """The TOML value type of a field annotation: int, float, str, bool, list (array) or dict (table)."""
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        return _toml_type(next(a for a in typing.get_args(hint) if a is not type(None)))
    if origin in (tuple, list):
        return list
    if origin is dict or dataclasses.is_dataclass(hint):
        return dict
    return hint


def _section_schema(cls: type) -> dict[str, type]:
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        toml = f.metadata.get("toml", _toml_type(hints[f.name]))
        if toml is not None:
            out[f.metadata.get("key", f.name)] = toml
    return out


SECTIONS: dict[str, type] = {
    "": Suite,
    "dataset": Dataset,
    "run": RunSettings,
    "measurement": Measurement,
    "mongodb": MongoSettings,
    "audit": AuditSettings,
    "clients": ClientSettings,
    "mix": Mix,
}
#: section -> key -> TOML type, derived from the dataclasses (the file format of suites/README.md).
SCHEMA: dict[str, dict[str, type]] = {name: _section_schema(cls) for name, cls in SECTIONS.items()}


def _given(table: dict, cls: type, loc: _Located, section: str) -> dict[str, Any]:
    """The fields of *cls* that *table* sets, as the dataclass holds them (arrays as tuples, property
    tables as strings); the fields it does not set keep the dataclass's default."""
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        key = f.metadata.get("key", f.name)
        nested = f.metadata.get("nested") or dataclasses.is_dataclass(hints[f.name])
        if key not in table or f.metadata.get("toml", True) is None or nested:
            continue
        value = table[key]
        if f.name == "properties":
            value = _props(value, f"{section}.properties".lstrip("."), loc)
        elif _toml_type(hints[f.name]) is list and isinstance(value, list):
            value = tuple(value)
        elif _toml_type(hints[f.name]) is float:
            value = float(value)
        out[f.name] = value
    return out


# --- locating ---------------------------------------------------------------------------------------------


MAX_SUITE_BYTES = 2**20  # a suite is a few KiB of TOML; parsing a huge file would take minutes
MAX_SUITE_DEPTH = 16  # tables and arrays nested in each other; the built-in suites nest 4 deep


def _depth(value: Any) -> int:
    """How deeply tables and arrays nest in *value* (a scalar: 0), without recursion."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        node, level = todo.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        deepest = max(deepest, level + 1)
        if level + 1 <= MAX_SUITE_DEPTH:  # deeper than the limit is refused anyway: no need to walk on
            todo += [(c, level + 1) for c in children]
    return deepest


def _toml(text: str, where: str) -> dict[str, Any]:
    """*text* as TOML, tables and arrays nested at most ``MAX_SUITE_DEPTH`` deep; SuiteError else."""
    too_deep = SuiteError(
        f"{where}: tables and arrays nested more than {MAX_SUITE_DEPTH} deep; a suite nests them at most "
        f"{MAX_SUITE_DEPTH} deep: flatten it"
    )
    try:
        doc = tomllib.loads(text)
    except RecursionError:  # Python's own TOML parser recurses once per level: far past any real suite
        raise too_deep from None
    if _depth(doc) > MAX_SUITE_DEPTH:
        raise too_deep
    return doc


MAX_THREAD_COUNTS = 100  # run.threads entries (each one is a step per mix and repetition)
MAX_RUN_STEPS = 10_000  # measured and warm-up runs of one suite (a million took minutes and GB to plan)


def builtin_suites() -> dict[str, Path]:
    return {p.stem: p for p in sorted(suites_dir().glob("*.toml"))}


def suite_path(name_or_path: str) -> Path:
    """A built-in suite name or a path to a TOML file."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists():
        if p.is_dir():
            raise SuiteError(f"suite {p} is a directory: give the path of a .toml suite file")
        if not p.is_file():
            raise SuiteError(f"suite file {p} not found")
        return p
    builtins = builtin_suites()
    if name_or_path in builtins:
        return builtins[name_or_path]
    hint = did_you_mean(name_or_path, builtins)
    raise SuiteError(f"no suite named {name_or_path!r}{hint}; `ycsb-runner suites` lists them")


def did_you_mean(word: str, choices: Any) -> str:
    """`` (did you mean 'quick'?)`` for the choice closest to *word*, or "" when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


# --- loading ----------------------------------------------------------------------------------------------


class _Located:
    """Where a key's value came from, for error messages: the ``--set`` that gave it (*overrides*: dotted
    key -> the ``KEY=VALUE`` typed), else its line in the TOML text."""

    def __init__(self, path: Path, text: str, overrides: dict[str, str] | None = None) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.overrides = overrides or {}

    def where(self, dotted: str) -> str:
        key = dotted.split(".")[-1]
        key = re.sub(r"\[\d+\]$", "", key)
        pattern = re.compile(r"^\s*(\[+\s*)?[\"']?" + re.escape(key) + r"[\"']?\s*(=|\]|\.)")
        for i, line in enumerate(self.lines, 1):
            if pattern.search(line):
                return f"{self.path.name}, line {i}"
        return self.path.name

    def error(self, dotted: str, message: str) -> SuiteError:
        typed = self.overrides.get(dotted) or self.overrides.get(re.sub(r"\[\d+\]$", "", dotted))
        if typed is not None:  # (a secret option's value masked: secrets.mask_override)
            return SuiteError(f"--set {mask_override(typed)}: {dotted}: {message}")
        return SuiteError(f"suite {self.where(dotted)}: {dotted}: {message}")


def parse_value(text: str) -> Any:
    """A ``--set`` value: TOML syntax when it parses (numbers, booleans, arrays), else a plain string."""
    try:
        return _toml(f"v = {text}", f"--set value {text[:40]!r}")["v"]
    except tomllib.TOMLDecodeError:
        if "," in text:
            return [parse_value(t.strip()) for t in text.split(",") if t.strip()]
        return text


def _set_dotted(doc: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    if "properties" in parts[:-1]:  # a YCSB property's name is one key, dots and all (mongodb.upsert)
        at = parts.index("properties") + 1
        parts = [*parts[:at], ".".join(parts[at:])]
    node = doc
    for p in parts[:-1]:
        node = node.setdefault(p, {})
        if not isinstance(node, dict):
            raise SuiteError(f"--set {dotted}: {p} is not a table")
    node[parts[-1]] = value


def setting_names() -> list[str]:
    """Every ``--set`` key a suite knows by name: the shortcuts, then each section's dotted keys."""
    return list(SHORTCUTS) + [f"{s}.{k}" for s, keys in SCHEMA.items() if s and s != "mix" for k in keys]


def _override_path(key: str) -> str:
    if key in SHORTCUTS:
        return SHORTCUTS[key]
    head = key.split(".")[0]
    if (
        head in ("dataset", "run", "measurement", "mongodb", "audit", "clients", "properties", "tags")
        and "." in key
    ):
        return key
    if head == "p" and "." in key:  # --set p.mongodb.upsert=true: a raw YCSB property
        return "properties." + key[2:]
    raise SuiteError(
        f"--set {key}: unknown setting{did_you_mean(key, setting_names())}; "
        "use properties.NAME=VALUE for a YCSB property"
    )


def load_suite(
    name_or_path: str, overrides: list[str] | tuple[str, ...] = (), scale: float | None = None
) -> Suite:
    """Read, override (``key=value``), scale and validate a suite."""
    path = suite_path(name_or_path)
    text, raw = _read_suite(path)
    doc = copy.deepcopy(raw)
    pairs, typed = _parse_overrides(overrides)
    loc = _Located(path, text, typed)
    _apply_size(doc, pairs, loc)
    if scale is not None:  # before the other --set values, so that an explicit --set wins over the scaling
        _scale_doc(doc, scale)
    only_mixes = _apply_overrides(doc, pairs)
    suite = _build(doc, loc, path)
    if only_mixes is not None:
        suite = _only_mixes(suite, only_mixes)
    if scale is not None and not any(d in ("run.status_interval",) for d, _ in pairs):
        suite = _scale_status_interval(suite)
    return _replace(suite, overrides=tuple(overrides), scale=scale if scale is not None else 1.0)


def suite_text(name_or_path: str) -> str:
    """The text of a built-in suite or of a suite file (what ``suites show`` prints), once it is known to
    be a suite: a file that is not one (``/etc/passwd``, a TOML file of something else) or is over the size
    limit is a SuiteError, as for ``render``."""
    load_suite(name_or_path)
    return _read_suite(suite_path(name_or_path))[0]


def _read_suite(path: Path) -> tuple[str, dict[str, Any]]:
    """A suite file's text and its TOML document (SuiteError when it is too large, unreadable or not TOML)."""
    try:
        text = read_bounded(path, MAX_SUITE_BYTES, "a suite file").decode("utf-8")
    except UserError as err:
        raise SuiteError(str(err)) from None
    except UnicodeDecodeError as err:
        raise SuiteError(f"cannot read suite {path}: not UTF-8 text ({err.reason})") from None
    try:
        return text, _toml(text, f"suite {path.name}")
    except tomllib.TOMLDecodeError as err:
        raise SuiteError(f"suite {path.name}: invalid TOML: {err}") from err


def _parse_overrides(overrides: list[str] | tuple[str, ...]) -> tuple[list[tuple[str, Any]], dict[str, str]]:
    """The ``--set KEY=VALUE`` items as (dotted key, value) pairs, and per dotted key the --set that gave it
    (the last one wins, as its value)."""
    pairs: list[tuple[str, Any]] = []
    typed: dict[str, str] = {}
    for item in overrides:
        if "=" not in item:
            raise SuiteError(f"--set {item!r}: expected KEY=VALUE")
        key, value = item.split("=", 1)
        pairs.append((_override_path(key.strip()), parse_value(value.strip())))
        typed[pairs[-1][0]] = item.strip()
    return pairs, typed


def _apply_size(doc: dict, pairs: list[tuple[str, Any]], loc: _Located) -> None:
    """The chosen size's profile into *doc*, first, so that other --set win over it."""
    for dotted, value in pairs:
        if dotted == "size":
            doc["size"] = str(value)
    size = doc.get("size")
    if size is None:
        return
    sizes = doc.get("sizes", {})
    if not isinstance(sizes, dict) or size not in sizes:
        raise loc.error(
            "size",
            f"unknown size {size!r}{did_you_mean(str(size), sizes or {})}; "
            f"known: {', '.join(sizes) or 'none'}",
        )
    for dotted, value in sizes[size].items():
        if not isinstance(value, dict):
            _set_dotted(doc, dotted, value)
        else:
            for k, v in value.items():
                _set_dotted(doc, f"{dotted}.{k}", v)


_LIST_SETTINGS = ("run.threads", "audit.states", "measurement.percentiles")


def _apply_overrides(doc: dict, pairs: list[tuple[str, Any]]) -> list[Any] | None:
    """The --set values other than the size into *doc*; returns what ``--set mixes`` keeps (None: all)."""
    only_mixes = None
    for dotted, value in pairs:
        if dotted == "size":
            continue
        if dotted == "mixes":
            only_mixes = value if isinstance(value, list) else [value]
            continue
        if dotted in _LIST_SETTINGS and not isinstance(value, list):
            value = [value]
        _set_dotted(doc, dotted, value)
    return only_mixes


def _only_mixes(suite: Suite, only_mixes: list[Any]) -> Suite:
    names = [m.name for m in suite.mixes]
    for n in only_mixes:
        if n not in names:
            raise SuiteError(f"--set mixes: no mix named {n!r}{did_you_mean(str(n), names)}")
    return _replace(suite, mixes=tuple(m for m in suite.mixes if m.name in only_mixes))


def _replace(suite: Suite, **changes: Any) -> Suite:
    from dataclasses import replace

    return replace(suite, **changes)


SCALED = (("dataset", "recordcount"), ("run", "operationcount"), ("run", "maxexecutiontime"))


def _scale_doc(doc: dict, scale: float) -> None:
    """Shrink (or grow) the data and the run length by *scale*: recordcount, operationcount and
    maxexecutiontime (at least 1 each). Threads and target stay as the study set them (use --set)."""
    if not (isinstance(scale, int | float) and scale > 0 and math.isfinite(scale)):
        raise SuiteError(f"--scale {scale}: must be a positive number")
    for section, key in SCALED:
        table = doc.get(section)
        if isinstance(table, dict) and isinstance(table.get(key), int) and not isinstance(table[key], bool):
            table[key] = max(1, round(table[key] * scale))


STATUS_POINTS = 10  # a scaled run still shows at least this many status lines per step


def expected_step_seconds(suite: Suite) -> float:
    """How long one run step lasts: maxexecutiontime, or operationcount at the estimated throughput."""
    by_time = suite.run.maxexecutiontime
    by_ops = suite.run.operationcount / suite.estimated_throughput if suite.run.operationcount else None
    known = [t for t in (by_time, by_ops) if t]
    return float(min(known)) if known else 0.0


def _scale_status_interval(suite: Suite) -> Suite:
    """A scaled run keeps ~10 status lines per step: the study's interval shrinks to step length / 10 (1 s
    at least) unless ``--set status_interval`` chose one."""
    seconds = expected_step_seconds(suite)
    if seconds <= 0:
        return suite
    fitted = max(1, min(suite.run.status_interval, int(seconds // STATUS_POINTS)))
    if fitted == suite.run.status_interval:
        return suite
    return _replace(suite, run=_replace(suite.run, status_interval=fitted))


# --- validation -------------------------------------------------------------------------------------------


def _check_keys(table: dict, section: str, loc: _Located, prefix: str) -> None:
    allowed = SCHEMA[section]
    for key, value in table.items():
        dotted = f"{prefix}{key}"
        if key not in allowed:
            raise loc.error(dotted, f"unknown key{did_you_mean(key, allowed)}")
        want = allowed[key]
        ok = (
            (want is float and isinstance(value, int | float) and not isinstance(value, bool))
            or (want is int and isinstance(value, int) and not isinstance(value, bool))
            or (want not in (int, float) and isinstance(value, want))
        )
        if not ok:
            raise loc.error(dotted, f"expected {want.__name__}, got {type(value).__name__} {value!r}")


def _props(table: dict, where: str, loc: _Located) -> dict[str, str]:
    out = {}
    for k, v in table.items():
        if isinstance(v, dict | list):
            raise loc.error(f"{where}.{k}", "a YCSB property must be a single value")
        out[str(k)] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


_JAVA_CLASS = re.compile(r"[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*")


def _check_safe(name: str, dotted: str, loc: _Located) -> None:
    """A name that becomes part of a folder name (``paths.SAFE_NAME``)."""
    if not SAFE_NAME.fullmatch(name):
        raise loc.error(
            dotted,
            f"{name!r}: use letters, digits, '_', '.' and '-' (at most 100, starting with a letter or "
            "digit): it names the result folders",
        )


def _java_int(value: int | None, dotted: str, loc: _Located) -> None:
    """YCSB 0.17.0 reads its counts with Integer.parseInt: a larger one fails after the server started."""
    if value is not None and value > INT_MAX:
        raise loc.error(dotted, f"YCSB 0.17.0 reads it as a Java int: at most {INT_MAX}, got {value}")


def _nonneg(value: float | None, dotted: str, loc: _Located, positive: bool = False) -> None:
    if value is None:
        return
    if value < 0 or (positive and value == 0):
        raise loc.error(dotted, f"must be {'positive' if positive else 'zero or more'}, got {value}")


def _dataset(ds: dict, loc: _Located) -> Dataset:
    if "recordcount" not in ds:
        raise loc.error("dataset.recordcount", "missing")
    dataset = Dataset(**_given(ds, Dataset, loc, "dataset"))
    for k in ("recordcount", "fieldcount", "fieldlength", "load_threads"):
        _nonneg(getattr(dataset, k), f"dataset.{k}", loc, positive=True)
    _nonneg(dataset.load_target, "dataset.load_target", loc)
    for k in ("recordcount", "fieldcount", "fieldlength", "load_threads", "load_target"):
        _java_int(getattr(dataset, k), f"dataset.{k}", loc)
    if dataset.reload not in ("auto", "always", "never"):
        raise loc.error("dataset.reload", f"must be auto, always or never, got {dataset.reload!r}")
    return dataset


def _thread_counts(rn: dict, loc: _Located) -> list[int]:
    threads = rn.get("threads", [1])
    threads = [threads] if isinstance(threads, int) else threads
    if not threads or not all(isinstance(t, int) and not isinstance(t, bool) for t in threads):
        raise loc.error("run.threads", f"expected a list of whole numbers, got {threads!r}")
    if len(threads) > MAX_THREAD_COUNTS:
        raise loc.error(
            "run.threads", f"{len(threads)} thread counts: at most {MAX_THREAD_COUNTS} (one step each)"
        )
    for t in threads:
        _nonneg(t, "run.threads", loc, positive=True)
    repeated = sorted({t for t in threads if threads.count(t) > 1})
    if repeated:
        raise loc.error(
            "run.threads",
            f"thread count {', '.join(map(str, repeated))} is listed more than once: list each once "
            "(use repetitions to measure one several times)",
        )
    return threads


def _run_settings(rn: dict, loc: _Located) -> RunSettings:
    threads = _thread_counts(rn, loc)
    run = RunSettings(**{**_given(rn, RunSettings, loc, "run"), "threads": tuple(threads)})
    _nonneg(run.target, "run.target", loc)
    _nonneg(run.operationcount, "run.operationcount", loc, positive=True)
    _nonneg(run.maxexecutiontime, "run.maxexecutiontime", loc, positive=True)
    _nonneg(run.status_interval, "run.status_interval", loc, positive=True)
    for k in ("operationcount", "target", "maxexecutiontime", "status_interval"):
        _java_int(getattr(run, k), f"run.{k}", loc)
    for t in threads:
        _java_int(t, "run.threads", loc)
    if run.operationcount is None and run.maxexecutiontime is None:
        raise loc.error("run", "set operationcount or maxexecutiontime (or both) so that every run ends")
    if run.target and run.target < max(run.threads):
        raise loc.error(
            "run.target",
            f"target {run.target} ops/s is below the thread count {max(run.threads)}: "
            "each thread would get less than one op per second",
        )
    return run


def _measurement(ms: dict, loc: _Located) -> Measurement:
    measurement = Measurement(**_given(ms, Measurement, loc, "measurement"))
    measurement = dataclasses.replace(
        measurement, percentiles=tuple(float(p) for p in measurement.percentiles)
    )
    if measurement.type not in MEASUREMENT_TYPES:
        raise loc.error(
            "measurement.type",
            f"must be one of {', '.join(MEASUREMENT_TYPES)}"
            f"{did_you_mean(measurement.type, MEASUREMENT_TYPES)}",
        )
    if measurement.interval not in ("op", "intended", "both"):
        raise loc.error("measurement.interval", "must be op, intended or both")
    if measurement.type.startswith("hdrhistogram") and not measurement.percentiles:
        raise loc.error("measurement.percentiles", "empty: list at least one, e.g. [95, 99]")
    if any(not (0 < p < 100) for p in measurement.percentiles):
        raise loc.error("measurement.percentiles", "percentiles must be between 0 and 100")
    return measurement


def _mongodb(mg: dict, loc: _Located) -> MongoSettings:
    mongodb = MongoSettings(**_given(mg, MongoSettings, loc, "mongodb"))
    mongodb = dataclasses.replace(
        mongodb, url_options={str(k): str(v) for k, v in mongodb.url_options.items()}
    )
    for k, v in mongodb.url_options.items():
        try:
            check_option_escapes(k, v, "the")
        except UserError as err:
            raise loc.error(f"mongodb.url_options.{k}", str(err)) from None
    _nonneg(mongodb.batchsize, "mongodb.batchsize", loc, positive=True)
    if mongodb.driver_defaults not in DRIVER_DEFAULTS:
        raise loc.error(
            "mongodb.driver_defaults", "must be stock (driver 3.8 defaults) or driver (5.x defaults)"
        )
    return mongodb


def _audit(au: dict, loc: _Located) -> AuditSettings:
    states = tuple(au.get("states", []))
    for s in states:
        if s not in AUDIT_STATES:
            raise loc.error("audit.states", f"unknown audit state {s!r}: use off and/or on")
    return AuditSettings(**{**_given(au, AuditSettings, loc, "audit"), "states": states})


def _clients(cl: dict, loc: _Located) -> ClientSettings:
    clients = ClientSettings(**_given(cl, ClientSettings, loc, "clients"))
    if not all(isinstance(h, str) and h.strip() for h in clients.hosts):
        raise loc.error("clients.hosts", 'expected a list of host names, e.g. ["local", "user@host:22"]')
    return clients


def _mix_name(i: int, m: Any, loc: _Located, seen: set[str]) -> str:
    if not isinstance(m, dict):
        raise loc.error(f"mix[{i}]", "each [[mix]] must be a table")
    _check_keys(m, "mix", loc, "mix.")
    name = m.get("name")
    if not name:
        raise loc.error(f"mix[{i}]", "every [[mix]] needs a name")
    if not isinstance(name, str):
        raise loc.error(f"mix[{i}].name", f"expected a string, got {name!r}")
    _check_safe(name, "mix.name", loc)
    if name in seen:
        raise loc.error("name", f"two mixes are named {name!r}")
    seen.add(name)
    return name


def _mix(m: dict, name: str, loc: _Located, run: RunSettings) -> Mix:
    props = {op: float(m.get(op, 0.0)) for op in MIX_OPS}
    for op, v in props.items():
        if v < 0 or v > 1:
            raise loc.error(f"mix.{op}", f"mix {name!r}: proportion {v} must be between 0 and 1")
    total = sum(props.values())
    if abs(total - 1.0) > 1e-6:
        raise loc.error(
            f"mix.{next((op for op in MIX_OPS if op in m), 'read')}",
            f"mix {name!r}: proportions sum to {total:g}, not 1",
        )
    given = _given(m, Mix, loc, "mix")
    dist = given.get("requestdistribution", Mix.requestdistribution)
    if dist not in DISTRIBUTIONS:
        raise loc.error(
            "mix.requestdistribution",
            f"mix {name!r}: unknown distribution {dist!r}{did_you_mean(dist, DISTRIBUTIONS)}",
        )
    if dist == "zipfian" and run.operationcount is None:
        raise loc.error(
            "run.operationcount",
            f"mix {name!r} uses zipfian, which needs operationcount (YCSB 0.17.0 fails without it)",
        )
    audit_ops = m.get("audit_ops")
    if audit_ops is None:
        audit_ops = [op for op in MIX_OPS if props[op] > 0]
    for op in audit_ops:
        if op not in OP_NAMES:
            raise loc.error(
                "mix.audit_ops", f"mix {name!r}: unknown operation {op!r}{did_you_mean(op, MIX_OPS)}"
            )
    return Mix(**{**given, **props, "audit_ops": tuple(audit_ops)})


def _mixes(mixes_raw: list, loc: _Located, run: RunSettings) -> list[Mix]:
    if not mixes_raw:
        raise loc.error("mix", "a suite needs at least one [[mix]]")
    seen: set[str] = set()
    return [_mix(m, _mix_name(i, m, loc, seen), loc, run) for i, m in enumerate(mixes_raw)]


def _check_suite(suite: Suite, loc: _Located) -> None:
    """What the whole suite must satisfy once its sections are read."""
    for where, props in (
        ("properties", suite.properties),
        ("dataset.properties", suite.dataset.properties),
        *((f"mix.properties ({m.name})", m.properties) for m in suite.mixes),
    ):
        workload = props.get("workload")
        if workload is not None and not _JAVA_CLASS.fullmatch(workload):
            raise loc.error(f"{where}.workload", f"{workload!r} is not a Java class name")
    if suite.order not in ("blocked", "interleaved"):
        raise loc.error("order", f"must be blocked or interleaved, got {suite.order!r}")
    _nonneg(suite.repetitions, "repetitions", loc, positive=True)
    _nonneg(suite.warmup_runs, "warmup_runs", loc)
    _nonneg(suite.warmup_s, "warmup_s", loc)
    _nonneg(suite.clients.warmup_s, "clients.warmup_s", loc)
    if not (math.isfinite(suite.estimated_throughput) and suite.estimated_throughput > 0):
        raise loc.error(
            "estimated_throughput", f"must be a positive number, got {suite.estimated_throughput}"
        )
    runs = len(suite.mixes) * len(suite.run.threads) * suite.repetitions * max(1, len(suite.audit.states))
    if runs * (1 + suite.warmup_runs) > MAX_RUN_STEPS:
        raise loc.error(
            "repetitions",
            f"{runs * (1 + suite.warmup_runs):,} run steps (mixes x threads x repetitions x audit states x "
            f"warm-ups): at most {MAX_RUN_STEPS:,} in one suite",
        )
    if suite.study is not None:
        if suite.study not in STUDIES:
            raise loc.error("study", f"unknown study {suite.study!r}; known: {', '.join(STUDIES)}")


def _build(doc: dict, loc: _Located, path: Path) -> Suite:
    """The suite of a parsed TOML document: each section read and checked by its own function, in the order
    of the file's sections, then what the whole suite must satisfy."""
    _check_keys(doc, "", loc, "")
    for section in ("dataset", "run", "measurement", "mongodb", "audit", "clients"):
        _check_keys(doc.get(section, {}), section, loc, f"{section}.")
    if "name" not in doc:
        raise loc.error("name", "missing (every suite needs a name)")
    if not doc["name"].strip():
        raise loc.error("name", "empty: give the suite a name (it names the result folders)")
    _check_safe(doc["name"], "name", loc)
    dataset = _dataset(doc.get("dataset", {}), loc)
    run = _run_settings(doc.get("run", {}), loc)
    measurement = _measurement(doc.get("measurement", {}), loc)
    mongodb = _mongodb(doc.get("mongodb", {}), loc)
    audit = _audit(doc.get("audit", {}), loc)
    clients = _clients(doc.get("clients", {}), loc)
    mixes = _mixes(doc.get("mix", []), loc, run)
    top = _given(doc, Suite, loc, "")
    suite = Suite(
        **{**top, "description": top.get("description", "")},
        dataset=dataset,
        run=run,
        measurement=measurement,
        mongodb=mongodb,
        audit=audit,
        mixes=tuple(mixes),
        clients=clients,
        path=str(path),
    )
    _check_suite(suite, loc)
    return dataclasses.replace(
        suite,
        tags={str(k): str(v) for k, v in suite.tags.items()},
        notes=tuple(str(n) for n in suite.notes),
        sizes=tuple(doc.get("sizes", {})),
    )

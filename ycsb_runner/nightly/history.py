"""The run history: every finished, failed or interrupted run, indexed for ``runs`` and ``regress``.

One record per run (id, suite, parameter fingerprint, tags, server kind and version, client host, times,
verdict) and its key figures per measured step and operation (throughput, average, p50/p95/p99 latency),
read from the run folder through :class:`ycsb_runner.model.RunResult`. The folders stay the source of truth:
``ycsb-runner history rebuild`` makes the index again from them. The one thing that is not derived from
the folders is the accepted changes (``regress accept``: who accepted which change of which series, when and
why); a rebuild keeps them.

Stores: an SQLite file in the results folder (default, ``results/history.sqlite``; WAL journal, one
``BEGIN IMMEDIATE`` transaction per run, so concurrent writers queue and a killed writer leaves the file as
it was before), or a MongoDB database of its own (``--history-url``/``YCSB_RUNNER_HISTORY_URL``), one
document per run written with a single upsert, so several load generators can append to one history
(accepted changes in the collection ``accepts``).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

import pandas as pd

from ycsb_runner.errors import UserError
from ycsb_runner.model import MANIFEST, NO_AUDIT, Manifest, RunResult, StepKeys, epoch_of
from ycsb_runner.paths import HISTORY_ENV, HISTORY_FILE

SCHEMA_VERSION = 2  # 2: the accepts table (a file of version 1 gets it when opened)

RUN_COLUMNS = [
    "run_id",
    "suite",
    "fingerprint",
    "verdict",
    "started_at",
    "ended_at",
    "server_kind",
    "server_version",
    "client_host",
    "tags",
    "folder",
    "error",
]
SERIES_KEYS = ["phase", "mix", "threads", "audit", "operation", "metric"]
METRIC_COLUMNS = ["run_id", "step", "repetition", *SERIES_KEYS, "value"]
# operations.csv column -> history metric (per operation); throughput is per step ("OVERALL")
OPERATION_FIGURES = {
    "average_latency_us": "avg_us",
    "p50_us": "p50_us",
    "p95_us": "p95_us",
    "p99_us": "p99_us",
}
OVERALL = "OVERALL"
STATIONARY = "stationary"  # 1.0 / 0.0 per run step with a steady-state test (ycsb_runner.analyse.steady)
# a findmax run's series: phase and step "findmax", the found rate under the run's bound
FINDMAX = "findmax"
FINDMAX_METRIC = "findmax_ops_s"
# the canaries of a run (``ycsb_runner.execute.canary``): phase "canary", the canary's kind as its mix
CANARY = "canary"
CANARY_LOAD_GENERATOR, CANARY_ROUND_TRIP, CANARY_HOST = "load-generator", "round-trip", "host"
# one accepted change of one series: from change_run on, the series' nights are its new normal
ACCEPT_COLUMNS = [
    "suite",
    *SERIES_KEYS,
    "change_run",  # the run where the accepted change began
    "accepted_at_run",  # the newest run when it was accepted
    "accepted_by",
    "accepted_at",  # UTC ISO time
    "why",
]


def series_id(values: Iterable[Any]) -> tuple[str, ...]:
    """A series' SERIES_KEYS values as text (None and NaN -> "", 4.0 -> "4"): the same tuple whether the
    values come from the metrics, an acceptance, SQLite or MongoDB."""

    def text(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return ""
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return str(v)

    return tuple(text(v) for v in values)


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python value SQLite and BSON store."""
    return v.item() if hasattr(v, "item") and not isinstance(v, str) else v


def _accept_values(row: dict[str, Any]) -> list[Any]:
    return [_plain(row[c]) for c in ACCEPT_COLUMNS]


def _accepts_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Acceptances, oldest first (by time; ties keep the order they were written in)."""
    df = pd.DataFrame([{c: r.get(c) for c in ACCEPT_COLUMNS} for r in rows], columns=ACCEPT_COLUMNS)
    return df.sort_values("accepted_at", kind="stable").reset_index(drop=True)


# --- records from a run folder (pure, over RunResult) ------------------------------------------------------


@dataclass
class RunRecord:
    run: dict[str, Any]
    metrics: list[dict[str, Any]]


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def run_record(result: RunResult, figures: bool = True) -> RunRecord:
    """The history record of a run folder: the run's facts and one row per (step, operation, metric)
    (none with *figures* False)."""
    m = result.manifest
    run = {
        "run_id": m.run_id,
        "suite": m.suite.name,
        "fingerprint": m.fingerprint,
        "verdict": m.status,
        "started_at": m.started_at_utc,
        "ended_at": m.ended_at_utc,
        "server_kind": m.target.get("server_kind") or "",
        "server_version": m.target.get("server_version") or "",
        "client_host": m.host.get("hostname") or "",
        "tags": dict(m.tags),
        "folder": str(result.root.resolve()),
        "error": m.error or "",
    }
    if not figures:
        return RunRecord(run, [])
    measured = {
        s.keys.step: s
        for s in m.steps
        if s.keys.phase in ("load", "run") and not s.discarded and s.verdict == "completed"
    }
    rows: list[dict[str, Any]] = []
    if m.findmax is not None:  # the probes' figures follow their targets: the found rate is the series
        measured = {k: s for k, s in measured.items() if s.keys.phase == "load"}
        rows += _findmax_rows(m)
    rows += canary_rows(m.run_id, m.canaries)
    figures_of: list[tuple[str, str, str, Any]] = []  # (step, operation, metric, value)
    for label, step in measured.items():
        figures_of.append((label, OVERALL, "throughput_ops_s", step.throughput_ops_s))
        if isinstance(step.figures.get("stationary"), bool):  # not a series regress tests: a flag it names
            figures_of.append((label, OVERALL, STATIONARY, float(step.figures["stationary"])))
    figures_of += _operation_figures(result.operations, measured)
    for step_name, operation, metric, value in figures_of:
        v = _num(value)
        if v is not None:
            rows.append(_metric_row(m.run_id, measured[step_name].keys, operation, metric, v))
    return RunRecord(run, rows)


def _metric_row(run_id: str, k: StepKeys, operation: str, metric: str, value: float) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "step": k.step,
        "repetition": k.repetition,
        "phase": k.phase,
        "mix": k.mix,
        "threads": k.threads,
        "audit": k.audit,
        "operation": operation,
        "metric": metric,
        "value": value,
    }


def _findmax_rows(m: Manifest) -> list[dict[str, Any]]:
    """The rate a completed findmax run found, as one row of its own step."""
    found = _num((m.findmax or {}).get("max_ops_s"))
    if m.status != "completed" or found is None:
        return []
    findmax = m.findmax or {}
    return [
        {
            "run_id": m.run_id,
            "step": FINDMAX,
            "repetition": 0,
            "phase": FINDMAX,
            "mix": str(findmax.get("mix") or ""),
            "threads": int(findmax.get("threads") or 0),
            "audit": NO_AUDIT,
            "operation": OVERALL,
            "metric": FINDMAX_METRIC,
            "value": found,
        }
    ]


def _operation_figures(ops: pd.DataFrame, measured: dict[str, Any]) -> list[tuple[str, str, str, Any]]:
    """(step, operation, metric, value) of each measured operation row of operations.csv (not CLEANUP, not
    the intended-latency rows, not a load generator's row with an outcome)."""
    if ops.empty or "operation" not in ops:
        return []
    ops = ops[ops["step"].isin(measured) & (ops.get("kind", "op") == "op")]
    ops = ops[ops["operation"] != "CLEANUP"]
    if "intended" in ops:
        ops = ops[~ops["intended"].astype(str).str.lower().eq("true")]
    if "outcome" in ops:
        ops = ops[ops["outcome"].isna() | (ops["outcome"].astype(str) == "")]
    return [
        (row["step"], str(row["operation"]), metric, row[col])
        for _, row in ops.iterrows()
        for col, metric in OPERATION_FIGURES.items()
        if col in row
    ]


def canary_rows(run_id: str, canaries: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The history rows of a manifest's ``canaries`` section: per load generator its BasicDB ops/s, the round
    trip to the server (repetition 0 before the steps, 1 after them), this host's CPU steal and the CPU
    other processes used over the run."""
    if not canaries:
        return []
    rows: list[dict[str, Any]] = []

    def add(rep: int, mix: str, threads: int, operation: str, metric: str, value: Any) -> None:
        v = _num(value)
        if v is not None:
            keys = {"phase": CANARY, "mix": mix, "threads": threads, "audit": NO_AUDIT}
            rows.append(
                {"run_id": run_id, "step": CANARY, "repetition": rep, **keys, "operation": operation}
                | {"metric": metric, "value": v}
            )

    for gen in canaries.get("load_generator") or []:
        for rep, when in enumerate(("before", "after")):
            ops = gen.get("ops_s") or {}
            add(
                rep,
                CANARY_LOAD_GENERATOR,
                int(gen.get("threads") or 1),
                str(gen["client"]),
                "canary_ops_s",
                ops.get(when),
            )
    for rep, when in enumerate(("before", "after")):
        add(rep, CANARY_ROUND_TRIP, 0, "PING", "canary_rtt_us", (canaries.get("rtt_us") or {}).get(when))
    host = canaries.get("host") or {}
    add(0, CANARY_HOST, 0, OVERALL, "canary_steal_pct", host.get("steal_pct"))
    add(0, CANARY_HOST, 0, OVERALL, "canary_others_cpu_pct", host.get("others_cpu_pct"))
    return rows


# --- stores ------------------------------------------------------------------------------------------------


class History(Protocol):
    where: str

    def index(self, record: RunRecord) -> None: ...
    def replace_all(self, records: Iterable[RunRecord]) -> int: ...
    def runs(self) -> pd.DataFrame: ...
    def metrics(self, run_ids: list[str]) -> pd.DataFrame: ...
    def accept(self, rows: list[dict[str, Any]]) -> None: ...
    def accepts(self, suite: str) -> pd.DataFrame: ...


_INSERT_RUN = (
    f"INSERT OR REPLACE INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join('?' * len(RUN_COLUMNS))})"
)
_INSERT_METRIC = (
    f"INSERT INTO metrics ({', '.join(METRIC_COLUMNS)}) VALUES ({', '.join('?' * len(METRIC_COLUMNS))})"
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, suite TEXT NOT NULL, fingerprint TEXT NOT NULL, verdict TEXT NOT NULL,
    started_at TEXT, ended_at TEXT, server_kind TEXT, server_version TEXT, client_host TEXT,
    tags TEXT NOT NULL, folder TEXT, error TEXT
);
CREATE TABLE IF NOT EXISTS metrics (
    run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE, step TEXT NOT NULL,
    repetition INTEGER, phase TEXT, mix TEXT, threads INTEGER, audit TEXT, operation TEXT, metric TEXT,
    value REAL
);
CREATE INDEX IF NOT EXISTS metrics_run ON metrics(run_id);
CREATE INDEX IF NOT EXISTS runs_suite ON runs(suite, started_at);
CREATE TABLE IF NOT EXISTS accepts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, suite TEXT NOT NULL, phase TEXT, mix TEXT, threads INTEGER,
    audit TEXT, operation TEXT, metric TEXT, change_run TEXT NOT NULL, accepted_at_run TEXT NOT NULL,
    accepted_by TEXT NOT NULL, accepted_at TEXT NOT NULL, why TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS accepts_suite ON accepts(suite);
"""
_INSERT_ACCEPT = (
    f"INSERT INTO accepts ({', '.join(ACCEPT_COLUMNS)}) VALUES ({', '.join('?' * len(ACCEPT_COLUMNS))})"
)


#: How long a command waits for another process's lock on an SQLite history (a bench or a rebuild writing
#: it) before it says the history is locked.
BUSY_WAIT_S = 60.0


def _sqlite_trouble(path: Path, err: sqlite3.Error, doing: str) -> UserError:
    """A one-line error for an SQLite history that cannot be read or written, whose advice keeps the accepted
    changes (``regress accept``, kept only in the history): never "move it away" without "copy it first"."""
    text = str(err)
    if "locked" in text or "busy" in text:
        return UserError(
            f"the history {path} is locked by another process (a bench, a `history rebuild` or a `regress "
            f"accept` writing it?) and stayed locked for {BUSY_WAIT_S:g} s: run this again when it has "
            "finished (the history is sound; do not move it away)"
        )
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return UserError(
            f"cannot {doing} the history {path} ({text}): the file or its folder is read-only; `runs` and "
            "`regress` read it as it is, commands that write it need a writable copy (--history-url COPY)"
        )
    return UserError(
        f"cannot {doing} the history {path} ({text}): it is damaged. Copy it aside first (the accepted "
        "changes of `regress accept` are only in it), then move it away and run `ycsb-runner history "
        "rebuild`, which indexes the run folders again"
    )


def _read_only_mount(path: Path) -> bool:
    """Whether *path*'s file system is mounted read-only (then nobody writes the file while it is read)."""
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except OSError:
        return False


class SqliteHistory:
    """``results/history.sqlite``: WAL journal, one immediate transaction per write. ``runs``, ``metrics``
    and ``accepts`` read it without writing anything (``mode=ro``), so a history that is only readable (a
    read-only mount, another user's file) is still read; on a read-only mount, where SQLite cannot make the
    WAL's shared-memory file, it is opened ``immutable`` (safe there: nothing can change it)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.where = str(path)

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.path, timeout=BUSY_WAIT_S, isolation_level=None)
            con.execute("PRAGMA journal_mode=WAL")
            con.execute("PRAGMA foreign_keys=ON")
            con.execute(f"PRAGMA busy_timeout={int(BUSY_WAIT_S * 1000)}")
            version = self._check_version(con)
            if version < SCHEMA_VERSION:
                # IF NOT EXISTS: two first writers at once both succeed; an older file gains what it lacks
                con.executescript(_SCHEMA)
                con.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        except sqlite3.Error as err:
            raise _sqlite_trouble(self.path, err, "open") from None
        except OSError as err:  # its folder cannot be made (a file in the way, no permission, disk full)
            raise UserError(f"cannot open the history {self.path}: {err.strerror or err}") from None
        return con

    def _check_version(self, con: sqlite3.Connection) -> int:
        version = con.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            con.close()
            raise UserError(
                f"{self.path} has history schema {version}, newer than this ycsb-runner's "
                f"{SCHEMA_VERSION}: use the ycsb-runner that wrote it (a `history rebuild` after moving "
                "it away would lose its accepted changes)"
            )
        return version

    def _read(self, query: Callable[[sqlite3.Connection], Any]) -> Any:
        """*query*'s answer over a read-only connection (``immutable`` on a read-only mount when SQLite
        cannot open it otherwise); one-line errors for a locked, unreadable or damaged file."""
        self._refuse_empty()
        uri = f"file:{quote(str(self.path.absolute()))}?mode=ro"
        try:
            try:
                return self._query_at(uri, query)
            except sqlite3.OperationalError as err:
                if "unable to open" not in str(err) or not _read_only_mount(self.path.parent):
                    raise
                return self._query_at(uri + "&immutable=1", query)
        except sqlite3.Error as err:
            raise _sqlite_trouble(self.path, err, "read") from None
        except pd.errors.DatabaseError as err:  # read_sql_query's wrapper of SQLite's (another schema's file)
            cause = err.__cause__ if isinstance(err.__cause__, sqlite3.Error) else sqlite3.DatabaseError(err)
            raise _sqlite_trouble(self.path, cause, "read") from None

    def _refuse_empty(self) -> None:
        """A 0-byte history (SQLite would read it as one with no tables) is a lost one: one line that says so
        and what to do. (A history SQLite made has its header from the start, its WAL beside it.)"""
        wal = self.path.with_name(self.path.name + "-wal")
        try:
            if self.path.stat().st_size or (wal.exists() and wal.stat().st_size):
                return
        except OSError:  # missing or unreadable: as SQLite says it
            return
        raise UserError(
            f"the history {self.path} is empty (0 bytes: what an interrupted copy or a full disk leaves): "
            "restore it from a copy if you have one, else move it away and run `ycsb-runner history "
            "rebuild`, which indexes the run folders again"
        )

    def _query_at(self, uri: str, query: Callable[[sqlite3.Connection], Any]) -> Any:
        con = sqlite3.connect(uri, uri=True, timeout=BUSY_WAIT_S, isolation_level=None)
        try:
            con.execute(f"PRAGMA busy_timeout={int(BUSY_WAIT_S * 1000)}")
            self._check_version(con)
            return query(con)
        finally:
            con.close()

    @staticmethod
    def _write(con: sqlite3.Connection, record: RunRecord) -> None:
        r = record.run
        con.execute("DELETE FROM metrics WHERE run_id = ?", (r["run_id"],))
        con.execute(
            _INSERT_RUN,
            [json.dumps(r["tags"], sort_keys=True) if c == "tags" else r[c] for c in RUN_COLUMNS],
        )
        con.executemany(
            _INSERT_METRIC,
            [[row[c] for c in METRIC_COLUMNS] for row in record.metrics],
        )

    def _transaction(self, body: Callable[[sqlite3.Connection], Any]) -> Any:
        con = self._connect()
        try:
            con.execute("BEGIN IMMEDIATE")
            try:
                out = body(con)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            return out
        except sqlite3.Error as err:
            raise _sqlite_trouble(self.path, err, "write") from None
        finally:
            con.close()

    def index(self, record: RunRecord) -> None:
        self._transaction(lambda con: self._write(con, record))

    def replace_all(self, records: Iterable[RunRecord]) -> int:
        """Empty the history's runs and index *records* in one transaction (a killed rebuild changes
        nothing); the accepted changes stay."""

        def body(con: sqlite3.Connection) -> int:
            con.execute("DELETE FROM metrics")
            con.execute("DELETE FROM runs")
            n = 0
            for rec in records:
                self._write(con, rec)
                n += 1
            return n

        return self._transaction(body)

    def runs(self) -> pd.DataFrame:
        if not self.path.exists():
            return pd.DataFrame(columns=RUN_COLUMNS)
        df = self._read(lambda con: pd.read_sql_query(f"SELECT {', '.join(RUN_COLUMNS)} FROM runs", con))
        df["tags"] = df["tags"].map(lambda t: json.loads(t) if t else {})
        return df

    def metrics(self, run_ids: list[str]) -> pd.DataFrame:
        if not run_ids or not self.path.exists():
            return pd.DataFrame(columns=METRIC_COLUMNS)
        marks = ", ".join("?" * len(run_ids))
        sql = f"SELECT {', '.join(METRIC_COLUMNS)} FROM metrics WHERE run_id IN ({marks})"
        return self._read(lambda con: pd.read_sql_query(sql, con, params=run_ids))

    def accept(self, rows: list[dict[str, Any]]) -> None:
        """Record acceptances (``ACCEPT_COLUMNS``), all or none."""
        self._transaction(lambda con: con.executemany(_INSERT_ACCEPT, [_accept_values(r) for r in rows]))

    def accepts(self, suite: str) -> pd.DataFrame:
        """The suite's accepted changes, oldest first (none in a history of schema 1, which had no table)."""
        if not self.path.exists():
            return _accepts_frame([])

        def query(con: sqlite3.Connection) -> list[dict[str, Any]]:
            if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'accepts'").fetchone():
                return []
            con.row_factory = sqlite3.Row
            rows = con.execute(
                f"SELECT {', '.join(ACCEPT_COLUMNS)} FROM accepts WHERE suite = ? ORDER BY id", (suite,)
            ).fetchall()
            return [dict(r) for r in rows]

        return _accepts_frame(self._read(query))


def _brief(text: str, limit: int = 160) -> str:
    """pymongo's message on one line, without its topology description, cut at a word (never mid-word)."""
    for tail in (", Timeout:", ", Topology Description", " (configured timeouts"):
        text = text.split(tail)[0]
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


class MongoHistory:
    """A MongoDB database of the team's own: collection ``runs``, one document per run (one upsert), and
    ``accepts``, one document per accepted change of a series."""

    COLLECTION = "runs"
    ACCEPTS = "accepts"

    def __init__(self, url: str) -> None:
        from pymongo import MongoClient
        from pymongo.uri_parser import parse_uri

        from ycsb_runner.secrets import Masker

        masker = Masker()
        self.where = masker(url)
        try:
            db = parse_uri(url).get("database")
        except Exception as err:  # pymongo raises InvalidURI/ConfigurationError/ValueError
            raise UserError(f"--history-url {self.where} is not a MongoDB URL: {str(err)[:100]}") from None
        if not db:
            raise UserError(
                f"--history-url {self.where} names no database: add one, e.g. mongodb://host:27017/ycsb_history"
            )
        self._client = MongoClient(url, serverSelectionTimeoutMS=10000)
        self._coll = self._client[db][self.COLLECTION]
        self._accepts = self._client[db][self.ACCEPTS]

    def _call(self, fn: Callable[[], Any]) -> Any:
        from pymongo.errors import PyMongoError

        try:
            return fn()
        except PyMongoError as err:
            raise UserError(f"history at {self.where}: {type(err).__name__}: {_brief(str(err))}") from None

    @staticmethod
    def _doc(record: RunRecord) -> dict[str, Any]:
        doc = {"_id": record.run["run_id"], **record.run, "metrics": record.metrics}
        tags = doc["tags"]
        if any(not mongo_key(k) for k in tags):  # a folder from before the tag checks: key-value documents
            doc["tags"] = [{"k": k, "v": v} for k, v in tags.items()]  # (FerretDB has no nested arrays)
        return doc

    def index(self, record: RunRecord) -> None:
        doc = self._doc(record)
        self._call(lambda: self._coll.replace_one({"_id": doc["_id"]}, doc, upsert=True))

    def replace_all(self, records: Iterable[RunRecord]) -> int:
        """Upsert *records* and delete the other runs; the accepted changes (their own collection) stay."""
        ids = []
        for rec in records:
            self.index(rec)
            ids.append(rec.run["run_id"])
        self._call(lambda: self._coll.delete_many({"_id": {"$nin": ids}}))
        return len(ids)

    def runs(self) -> pd.DataFrame:
        docs = self._call(lambda: list(self._coll.find({}, {"metrics": 0})))
        for d in docs:
            if isinstance(d.get("tags"), list):
                d["tags"] = {str(t.get("k")): str(t.get("v")) for t in d["tags"] if isinstance(t, dict)}
        return pd.DataFrame([{c: d.get(c) for c in RUN_COLUMNS} for d in docs], columns=RUN_COLUMNS)

    def metrics(self, run_ids: list[str]) -> pd.DataFrame:
        if not run_ids:
            return pd.DataFrame(columns=METRIC_COLUMNS)
        docs = self._call(lambda: list(self._coll.find({"_id": {"$in": run_ids}}, {"metrics": 1})))
        rows = [row for d in docs for row in d.get("metrics") or []]
        return pd.DataFrame(rows, columns=METRIC_COLUMNS)

    def accept(self, rows: list[dict[str, Any]]) -> None:
        """Record acceptances in one insert (ordered: a failure leaves none after the failed one)."""
        docs = [dict(zip(ACCEPT_COLUMNS, _accept_values(r), strict=True)) for r in rows]
        if docs:
            self._call(lambda: self._accepts.insert_many(docs))

    def accepts(self, suite: str) -> pd.DataFrame:
        docs = self._call(lambda: list(self._accepts.find({"suite": suite}, {"_id": 0}).sort("_id", 1)))
        return _accepts_frame(docs)


def open_history(results: Path, url: str | None = None) -> History:
    """The history named by *url* (``mongodb://``/``mongodb+srv://``, or an SQLite file path), by
    ``$YCSB_RUNNER_HISTORY_URL``, or ``<results>/history.sqlite``."""
    url = url or os.environ.get(HISTORY_ENV) or None
    if url is None:
        return SqliteHistory(results / HISTORY_FILE)
    if url.startswith(("mongodb://", "mongodb+srv://")):
        return MongoHistory(url)
    if url.startswith("sqlite:///"):
        return SqliteHistory(Path(url.removeprefix("sqlite://")))
    if "://" in url:
        raise UserError(
            f"--history-url: expected mongodb://HOST/DB or an SQLite file path, got {url.split('://')[0]}://..."
        )
    return SqliteHistory(Path(url).expanduser())


# --- writing and rebuilding --------------------------------------------------------------------------------


def index_run(result: RunResult, results: Path, url: str | None = None) -> History:
    """Index one loaded run folder (re-indexing replaces its record)."""
    history = open_history(results, url)
    history.index(run_record(result))
    return history


def run_folders(results: Path) -> list[Path]:
    """The run folders under *results* (not the ``latest`` link), oldest name first."""
    if not results.is_dir():
        return []
    return sorted(
        p for p in results.iterdir() if p.is_dir() and not p.is_symlink() and (p / MANIFEST).is_file()
    )


def rebuild(
    results: Path, url: str | None = None, *, log: Callable[[str], None] = print
) -> tuple[History, int]:
    """Index every run folder under *results* again (damaged folders are skipped with a warning). A folder
    whose runner died (SIGKILL, power loss) is first marked ``killed`` the way the next ``bench`` marks it."""
    import socket

    from ycsb_runner.model import mark_abandoned

    for stale in mark_abandoned(results, socket.gethostname()):
        log(f"marked {stale} as killed: the ycsb-runner that ran it no longer runs")
    records = []
    for folder in run_folders(results):
        try:
            result = RunResult.load(folder)
            try:
                records.append(run_record(result))
            except (UserError, KeyError, ValueError, TypeError, AttributeError) as err:
                if result.manifest.status == "completed":
                    raise
                # a run killed while it wrote its files: listed (never judged), without figures
                records.append(run_record(result, figures=False))
                log(f"warning: {folder.name} ({result.manifest.status}) indexed without figures: {err}")
        except UserError as err:
            log(f"warning: skipped {folder.name}: {err}")
        except (KeyError, ValueError, TypeError, AttributeError) as err:  # a file of the wrong shape
            log(f"warning: skipped {folder.name}: damaged ({type(err).__name__}: {str(err)[:80]})")
    history = open_history(results, url)
    return history, history.replace_all(records)


# --- querying ----------------------------------------------------------------------------------------------


@dataclass
class RunFilter:
    suite: str | None = None
    tags: dict[str, str] | None = None
    since: str | None = None
    until: str | None = None
    verdict: str | None = None


def parse_tags(items: Iterable[str], option: str = "--tag") -> dict[str, str]:
    """``KEY=VALUE`` items as a dict (a filter: any text; ``check_tags`` says what a run may record)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"{option} {item!r}: expected KEY=VALUE, e.g. {option} server=7.0.12")
        out[key.strip()] = value.strip()
    return out


# What a run may record as tags (README, "Limits on input"): a key is a name a MongoDB history can store as
# a field (no leading "$", no "."), a value one line of text; both bounded, so that `runs` stays a table.
TAG_KEY_CHARS = 64
TAG_VALUE_CHARS = 256
MAX_TAGS = 32
NOTE_CHARS = 500  # regress accept --why
WHO_CHARS = 100  # regress accept --by


def mongo_key(key: str) -> bool:
    """Whether *key* can be a field name in a MongoDB document (no leading ``$``, no ``.``, no NUL)."""
    return bool(key) and not key.startswith("$") and "." not in key and "\x00" not in key


def check_text(value: str, what: str, limit: int) -> str:
    """*value* when it is one line of printable text of at most *limit* characters; else a UserError
    naming *what* (an option) and the first character that is not allowed."""
    if len(value) > limit:
        raise UserError(f"{what}: {len(value):,} characters, at most {limit} are kept: shorten it")
    from ycsb_runner.textsafe import UNSAFE

    bad = UNSAFE.search(value)
    if bad:
        raise UserError(
            f"{what}: holds the control character U+{ord(bad.group()):04X} at position {bad.start() + 1}: "
            "give one line of printable text"
        )
    return value


def check_tags(tags: dict[str, str], option: str = "--tag") -> dict[str, str]:
    """*tags* when a run may record them (``TAG_*`` limits, keys a MongoDB history can store); else a
    one-line UserError that says which tag and why."""
    if len(tags) > MAX_TAGS:
        raise UserError(f"{option}: {len(tags)} tags, at most {MAX_TAGS}")
    for key, value in tags.items():
        check_text(key, f"{option} key {key[:40]!r}", TAG_KEY_CHARS)
        if not mongo_key(key):
            raise UserError(
                f"{option} {key!r}: a tag key cannot start with '$' or hold '.' (a MongoDB history cannot "
                "store it): use letters, digits, '-' or '_', e.g. --tag server_version=7.0"
            )
        check_text(value, f"{option} {key}", TAG_VALUE_CHARS)
    return tags


def _when(text: str, option: str) -> float:
    try:
        t = epoch_of(text if "T" in text or " " in text else f"{text}T00:00:00+00:00")
    except ValueError:
        raise UserError(f"{option} {text!r}: expected a date (2026-12-01) or an ISO time") from None
    assert t is not None
    return t


def select_runs(runs: pd.DataFrame, f: RunFilter) -> pd.DataFrame:
    """*runs* (from a history) that pass the filter, oldest first."""
    out = runs.copy()
    if out.empty:
        return out
    if f.suite:
        out = out[out["suite"] == f.suite]
    for k, v in (f.tags or {}).items():  # a run without the key does not match, whatever the value
        out = out[out["tags"].map(lambda t, k=k, v=v: isinstance(t, dict) and k in t and str(t[k]) == v)]
    start = out["started_at"].map(lambda s: epoch_of(s) if isinstance(s, str) else math.nan)
    if f.since:
        out, start = out[start >= _when(f.since, "--since")], start[start >= _when(f.since, "--since")]
    if f.until:
        limit = _when(f.until, "--until")
        if "T" not in f.until and " " not in f.until:
            limit += 86400  # a date includes that whole day
        out, start = out[start < limit], start[start < limit]
    if f.verdict:
        out = out[out["verdict"] == f.verdict]
    return (
        out.assign(_t=start)
        .sort_values(["_t", "run_id"], kind="stable")
        .drop(columns="_t")
        .reset_index(drop=True)
    )


def runs_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs for printing: tags as ``k=v,k=v``."""
    out = runs.copy()
    out["tags"] = out["tags"].map(lambda t: ",".join(f"{k}={v}" for k, v in sorted((t or {}).items())))
    return out[RUN_COLUMNS]


def check_not_the_target(history_url: str | None, target_url: str) -> None:
    """Refuse a MongoDB history in the very database under test (its writes would perturb the run)."""
    from ycsb_runner.lock import target_key

    url = history_url or os.environ.get(HISTORY_ENV) or ""
    if not url.startswith(("mongodb://", "mongodb+srv://")):
        return

    def database(u: str) -> str:
        return u.split("://", 1)[1].split("/", 1)[1].split("?", 1)[0] if "/" in u.split("://", 1)[1] else ""

    if target_key(url) == target_key(target_url) and database(url) in ("", database(target_url)):
        raise UserError(
            "--history-url names the database under test: give the history a database of its own "
            "(e.g. .../ycsb_history), or a server that is not being measured"
        )

"""The run history: every finished, failed or interrupted run, indexed for ``runs`` and ``regress``.

One record per run (id, suite, parameter fingerprint, tags, server kind and version, client host, times,
status) and its key figures per measured step and operation (throughput, average, p50/p95/p99 latency),
read from the run folder through :class:`ycsb_runner.runs.model.RunResult`. The folders stay the source of
truth: ``ycsb-runner history rebuild`` makes the index again from them. The one thing that is not derived from
the folders is the accepted changes (``regress accept``: who accepted which change of which series, when and
why) and the alerts with their triage state (``ycsb_runner.runs.alerts``); a rebuild keeps both.

Stores: an SQLite file in the results folder (default, ``results/history.sqlite``; WAL journal, one
``BEGIN IMMEDIATE`` transaction per run, so concurrent writers queue and a killed writer leaves the file as
it was before), or a MongoDB database of its own (``--history-url``/``YCSB_RUNNER_HISTORY_URL``), one
document per run written with a single upsert, so several load generators can append to one history
(accepted changes in the collection ``accepts``, alerts in ``alerts``).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import quote

import pandas as pd

from ycsb_runner import config
from ycsb_runner.errors import UserError
from ycsb_runner.paths import HISTORY_FILE, check_name
from ycsb_runner.runs.alerts import ALERT_FIELDS
from ycsb_runner.runs.model import MANIFEST, NO_AUDIT, CanariesRecord, Manifest, RunResult, StepKeys, epoch_of
from ycsb_runner.runs.series import SERIES_KEYS, series_id  # noqa: F401 - named here since issue 18

if TYPE_CHECKING:
    from ycsb_runner.runs.alerts import Alert

# 2: the accepts table, 3: the alerts and notifications tables (an older file gets them when opened for
# writing), 4: the runs' outcome is their ``status`` (it was ``verdict``: the column is renamed when the file
# is opened for writing, and read under its new name from an older file that is only read)
SCHEMA_VERSION = 4

RUN_COLUMNS = [
    "run_id",
    "suite",
    "fingerprint",
    "status",
    "started_at",
    "ended_at",
    "server_kind",
    "server_version",
    "client_host",
    "tags",
    "folder",
    "error",
]
METRIC_COLUMNS = ["run_id", "step", "repetition", *SERIES_KEYS, "value"]
# operations.csv column -> history metric (per operation); throughput is per step ("OVERALL")
OPERATION_FIGURES = {
    "average_latency_us": "avg_us",
    "p50_us": "p50_us",
    "p95_us": "p95_us",
    "p99_us": "p99_us",
    "p99.9_us": "p999_us",  # the tail beyond p99 (YCSB's 99.9 percentile, added by the command line)
    "max_latency_us": "max_us",
}
OVERALL = "OVERALL"
STATIONARY = "stationary"  # 1.0 / 0.0 per run step with a steady-state test (ycsb_runner.analyse.steady)
DURATION = "duration_s"  # per run step: its wall-clock seconds (what one more repetition costs a night)
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


def _plain(v: Any) -> Any:
    """A numpy scalar as the Python value SQLite and BSON store."""
    return v.item() if hasattr(v, "item") and not isinstance(v, str) else v


def _accept_values(row: dict[str, Any]) -> list[Any]:
    return [_plain(row[c]) for c in ACCEPT_COLUMNS]


# the alerts table: an Alert's fields with its series as SERIES_KEYS columns (text)
ALERT_COLUMNS = [c for f in ALERT_FIELDS for c in (SERIES_KEYS if f == "series" else [f])]
_ALERT_NEW = ["change_pct"]  # what a later judgement of the same alert updates (never its triage)


def _alert_row(a: Alert) -> dict[str, Any]:
    return a.flat()


def _alert_of(row: dict[str, Any]) -> Alert:
    from ycsb_runner.runs.alerts import from_record

    return from_record({**row, "series": {k: row.get(k) for k in SERIES_KEYS}})


def _triaged(old: Alert, status: str, by: str, why: str | None, link: str | None) -> Alert:
    """*old* with the triage state *status* set now by *by* (UserError for a state that is not one)."""
    from dataclasses import replace as _replace

    from ycsb_runner.runs.alerts import STATES, UNTRIAGED, check_state
    from ycsb_runner.runs.model import iso_utc

    check_state(status, [s for s in STATES if s != UNTRIAGED])
    if not by:
        raise UserError("--by is empty: say who triaged the alert, e.g. --by alice")
    now = str(iso_utc(time.time()))
    return _replace(
        old,
        status=status,
        status_by=by,
        status_at=now,
        why=why or None,
        link=link or None,
        first_triaged_at=old.first_triaged_at or now,
    )


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {str(r[1]) for r in con.execute(f"PRAGMA table_info({table})").fetchall()}


#: the runs table's column of schema 2 and 3 that schema 4 names ``status``
_OLD_STATUS = "verdict"


def _rename_status(con: sqlite3.Connection) -> None:
    """Schema 4's ``status`` column of an older file's runs table, in one immediate transaction (two writers
    opening the file at once: the second finds it renamed). SQLite >= 3.25 renames a column."""
    con.execute("BEGIN IMMEDIATE")
    try:
        if _OLD_STATUS in _columns(con, "runs"):
            con.execute(f"ALTER TABLE runs RENAME COLUMN {_OLD_STATUS} TO status")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _no_alert(alert_id: str) -> UserError:
    return UserError(f"no alert {alert_id!r} in the history: `ycsb-runner alerts` lists them")


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
        "status": m.status,
        "started_at": m.started_at_utc,
        "ended_at": m.ended_at_utc,
        "server_kind": m.target.server_kind or "",
        "server_version": m.target.server_version or "",
        "client_host": m.host.hostname or "",
        "tags": dict(m.tags),
        "folder": str(result.root.resolve()),
        "error": m.error or "",
    }
    if not figures:
        return RunRecord(run, [])
    measured = {
        s.keys.step: s
        for s in m.steps
        if s.keys.phase in ("load", "run") and not s.discarded and s.status == "completed"
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
        figures_of.append(
            (label, OVERALL, DURATION, step.duration_s)
        )  # not a series: regress's plan reads it
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
    findmax = m.findmax
    found = _num(findmax.max_ops_s) if findmax is not None else None
    if m.status != "completed" or findmax is None or found is None:
        return []
    return [
        {
            "run_id": m.run_id,
            "step": FINDMAX,
            "repetition": 0,
            "phase": FINDMAX,
            "mix": findmax.mix,
            "threads": findmax.threads,
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


def canary_rows(run_id: str, canaries: CanariesRecord | None) -> list[dict[str, Any]]:
    """The history rows of a manifest's ``canaries`` section: per load generator its BasicDB ops/s, the round
    trip to the server (repetition 0 before the steps, 1 after them), this host's CPU steal and the CPU
    other processes used over the run."""
    if canaries is None:
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

    for gen in canaries.load_generator:
        for rep, when in enumerate(("before", "after")):
            add(rep, CANARY_LOAD_GENERATOR, gen.threads or 1, gen.client, "canary_ops_s", gen.ops_s.get(when))
    for rep, when in enumerate(("before", "after")):
        add(rep, CANARY_ROUND_TRIP, 0, "PING", "canary_rtt_us", canaries.rtt_us.get(when))
    add(0, CANARY_HOST, 0, OVERALL, "canary_steal_pct", canaries.host.steal_pct)
    add(0, CANARY_HOST, 0, OVERALL, "canary_others_cpu_pct", canaries.host.others_cpu_pct)
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
    def record_alerts(self, alerts: list[Alert]) -> None: ...
    def alerts(self, suite: str | None = None) -> list[Alert]: ...
    def triage(
        self, alert_id: str, status: str, by: str, why: str | None = None, link: str | None = None
    ) -> Alert: ...
    def mark_recovered(self, alert_id: str, run_id: str) -> None: ...
    def delete_runs(self, run_ids: list[str]) -> int: ...
    def notified(self) -> set[tuple[str, str]]: ...
    def record_notified(self, alert_id: str, event: str, at: str) -> None: ...


_INSERT_RUN = (
    f"INSERT OR REPLACE INTO runs ({', '.join(RUN_COLUMNS)}) VALUES ({', '.join('?' * len(RUN_COLUMNS))})"
)
_INSERT_METRIC = (
    f"INSERT INTO metrics ({', '.join(METRIC_COLUMNS)}) VALUES ({', '.join('?' * len(METRIC_COLUMNS))})"
)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, suite TEXT NOT NULL, fingerprint TEXT NOT NULL, status TEXT NOT NULL,
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
CREATE TABLE IF NOT EXISTS alerts (
    alert_id TEXT PRIMARY KEY, suite TEXT NOT NULL, phase TEXT, mix TEXT, threads TEXT, audit TEXT,
    operation TEXT, metric TEXT, direction TEXT NOT NULL, change_pct REAL, change_run TEXT NOT NULL,
    raised_run TEXT NOT NULL, raised_at TEXT NOT NULL, status TEXT NOT NULL, status_by TEXT, status_at TEXT,
    why TEXT, link TEXT, first_triaged_at TEXT, recovered_run TEXT, baseline_run TEXT
);
CREATE INDEX IF NOT EXISTS alerts_suite ON alerts(suite);
CREATE TABLE IF NOT EXISTS notifications (
    alert_id TEXT NOT NULL, event TEXT NOT NULL, sent_at TEXT NOT NULL, PRIMARY KEY (alert_id, event)
);
"""
_NOTIFICATIONS_TABLE = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS notifications") :].split(";")[0]
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
            if _OLD_STATUS in _columns(con, "runs"):  # schema 2 or 3
                _rename_status(con)
            missing = [c for c in ALERT_COLUMNS if c not in _columns(con, "alerts")]
            for c in missing:  # an alerts table of an early schema 3 (before baseline_run)
                con.execute(f"ALTER TABLE alerts ADD COLUMN {c} TEXT")
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

        def query(con: sqlite3.Connection) -> pd.DataFrame:
            old = _OLD_STATUS in _columns(con, "runs")  # a schema 2 or 3 file only read (a read-only one)
            picked = [f"{_OLD_STATUS} AS status" if c == "status" and old else c for c in RUN_COLUMNS]
            return pd.read_sql_query(f"SELECT {', '.join(picked)} FROM runs", con)

        df = self._read(query)
        df["tags"] = df["tags"].map(lambda t: json.loads(t) if t else {})
        return df

    def metrics(self, run_ids: list[str]) -> pd.DataFrame:
        if not run_ids or not self.path.exists():
            return pd.DataFrame(columns=METRIC_COLUMNS)
        marks = ", ".join("?" * len(run_ids))
        sql = f"SELECT {', '.join(METRIC_COLUMNS)} FROM metrics WHERE run_id IN ({marks})"

        def query(con: sqlite3.Connection) -> pd.DataFrame:
            con.text_factory = _shared_text()  # a year of 200 series: 30 MB of equal strings, else
            return pd.read_sql_query(sql, con, params=run_ids)

        return self._read(query)

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

    def record_alerts(self, alerts: list[Alert]) -> None:
        """Upsert *alerts* by id in one transaction: a new one as given, a known one only its change and no
        longer recovered (its triage state, who, when, why stay)."""
        if not alerts:
            return
        cols = ", ".join(ALERT_COLUMNS)
        marks = ", ".join("?" * len(ALERT_COLUMNS))
        sql = (
            f"INSERT INTO alerts ({cols}) VALUES ({marks}) ON CONFLICT(alert_id) DO UPDATE SET "
            "change_pct = excluded.change_pct, recovered_run = NULL, "
            "baseline_run = COALESCE(baseline_run, excluded.baseline_run)"
        )
        rows = [[_plain(_alert_row(a)[c]) for c in ALERT_COLUMNS] for a in alerts]
        self._transaction(lambda con: con.executemany(sql, rows))

    def _alert_rows(self, con: sqlite3.Connection, where: str, params: tuple[Any, ...]) -> list[Alert]:
        if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'alerts'").fetchone():
            return []  # a history of schema 2 or older, read without writing it
        have = _columns(con, "alerts")
        con.row_factory = sqlite3.Row
        cols = ", ".join(c if c in have else f"NULL AS {c}" for c in ALERT_COLUMNS)
        sql = f"SELECT {cols} FROM alerts {where} ORDER BY raised_at, alert_id"
        return [_alert_of(dict(r)) for r in con.execute(sql, params).fetchall()]

    def alerts(self, suite: str | None = None) -> list[Alert]:
        """Every alert (of *suite*), oldest raised first."""
        if not self.path.exists():
            return []
        if suite is None:
            return self._read(lambda con: self._alert_rows(con, "", ()))
        return self._read(lambda con: self._alert_rows(con, "WHERE suite = ?", (suite,)))

    def triage(
        self, alert_id: str, status: str, by: str, why: str | None = None, link: str | None = None
    ) -> Alert:
        """Set the alert's triage state (who, now, why, link); the alert as it is now. UserError for an
        unknown id or state."""

        def body(con: sqlite3.Connection) -> Alert:
            found = self._alert_rows(con, "WHERE alert_id = ?", (alert_id,))
            if not found:
                raise _no_alert(alert_id)
            new = _triaged(found[0], status, by, why, link)
            con.execute(
                "UPDATE alerts SET status = ?, status_by = ?, status_at = ?, why = ?, link = ?, "
                "first_triaged_at = ? WHERE alert_id = ?",
                (new.status, new.status_by, new.status_at, new.why, new.link, new.first_triaged_at, alert_id),
            )
            return new

        return self._transaction(body)

    def mark_recovered(self, alert_id: str, run_id: str) -> None:
        """Record that the alert's series no longer flags as of *run_id* (the first such run is kept)."""
        self._transaction(
            lambda con: con.execute(
                "UPDATE alerts SET recovered_run = ? WHERE alert_id = ? AND recovered_run IS NULL",
                (run_id, alert_id),
            )
        )

    def notified(self) -> set[tuple[str, str]]:
        """The (alert_id, event) pairs already announced (``regress --notify``): none in an older history."""
        if not self.path.exists():
            return set()

        def query(con: sqlite3.Connection) -> set[tuple[str, str]]:
            if not con.execute("SELECT 1 FROM sqlite_master WHERE name = 'notifications'").fetchone():
                return set()
            return {(str(a), str(e)) for a, e in con.execute("SELECT alert_id, event FROM notifications")}

        return self._read(query)

    def record_notified(self, alert_id: str, event: str, at: str) -> None:
        """Remember that *event* of the alert was announced at *at* (UTC ISO); the first time is kept."""

        def body(con: sqlite3.Connection) -> None:
            con.execute(_NOTIFICATIONS_TABLE)  # a schema-3 file made before the table existed
            con.execute(
                "INSERT OR IGNORE INTO notifications (alert_id, event, sent_at) VALUES (?, ?, ?)",
                (alert_id, event, at),
            )

        self._transaction(body)

    def delete_runs(self, run_ids: list[str]) -> int:
        """Remove *run_ids* and their figures from the index in one transaction; how many were there."""

        def body(con: sqlite3.Connection) -> int:
            n = 0
            for rid in run_ids:
                con.execute("DELETE FROM metrics WHERE run_id = ?", (rid,))
                n += con.execute("DELETE FROM runs WHERE run_id = ?", (rid,)).rowcount
            return n

        return self._transaction(body) if run_ids else 0


def _brief(text: str, limit: int = 160) -> str:
    """pymongo's message on one line, without its topology description, cut at a word (never mid-word)."""
    for tail in (", Timeout:", ", Topology Description", " (configured timeouts"):
        text = text.split(tail)[0]
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(",;:") + " ..."


def _shared_text() -> Callable[[bytes], str]:
    """An SQLite text factory that decodes each distinct text once: the metric rows repeat a few hundred
    run ids, step and metric names, one string object each instead of one per row."""
    seen: dict[bytes, str] = {}

    def text(raw: bytes) -> str:
        found = seen.get(raw)
        if found is None:
            try:
                found = seen[raw] = raw.decode("utf-8")
            except UnicodeDecodeError as err:  # as SQLite's own factory says it
                raise sqlite3.OperationalError(f"Could not decode to UTF-8: {err}") from None
        return found

    return text


class MongoHistory:
    """A MongoDB database of the team's own: collection ``runs``, one document per run (one upsert), and
    ``accepts``, one document per accepted change of a series."""

    COLLECTION = "runs"
    ACCEPTS = "accepts"
    ALERTS = "alerts"
    NOTIFICATIONS = "notifications"  # (alert_id, event) pairs announced by regress --notify

    def __init__(self, url: str) -> None:
        from pymongo import MongoClient
        from pymongo.uri_parser import parse_uri

        from ycsb_runner.safe.secrets import Masker

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
        self._alerts = self._client[db][self.ALERTS]
        self._notifications = self._client[db][self.NOTIFICATIONS]

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
            if "status" not in d and _OLD_STATUS in d:  # a document written before schema 4
                d["status"] = d[_OLD_STATUS]
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

    def record_alerts(self, alerts: list[Alert]) -> None:
        """Upsert *alerts* by id (``_id``): a new one as given, a known one only its change and no longer
        recovered (its triage state stays)."""
        for a in alerts:
            row = {c: _plain(v) for c, v in _alert_row(a).items()}
            new = {k: row[k] for k in _ALERT_NEW}
            first = {k: v for k, v in row.items() if k not in _ALERT_NEW and k != "recovered_run"}
            self._call(
                lambda first=first, new=new: self._alerts.update_one(
                    {"_id": first["alert_id"]},
                    {"$setOnInsert": first, "$set": {**new, "recovered_run": None}},
                    upsert=True,
                )
            )

    def alerts(self, suite: str | None = None) -> list[Alert]:
        query = {} if suite is None else {"suite": suite}
        docs = self._call(lambda: list(self._alerts.find(query, {"_id": 0})))
        found = [_alert_of(d) for d in docs]
        return sorted(found, key=lambda a: (a.raised_at, a.alert_id))

    def triage(
        self, alert_id: str, status: str, by: str, why: str | None = None, link: str | None = None
    ) -> Alert:
        doc = self._call(lambda: self._alerts.find_one({"_id": alert_id}, {"_id": 0}))
        if not doc:
            raise _no_alert(alert_id)
        new = _triaged(_alert_of(doc), status, by, why, link)
        fields = ("status", "status_by", "status_at", "why", "link", "first_triaged_at")
        self._call(
            lambda: self._alerts.update_one({"_id": alert_id}, {"$set": {f: getattr(new, f) for f in fields}})
        )
        return new

    def mark_recovered(self, alert_id: str, run_id: str) -> None:
        self._call(
            lambda: self._alerts.update_one(
                {"_id": alert_id, "recovered_run": None}, {"$set": {"recovered_run": run_id}}
            )
        )

    def notified(self) -> set[tuple[str, str]]:
        docs = self._call(lambda: list(self._notifications.find({}, {"_id": 0, "alert_id": 1, "event": 1})))
        return {(str(d.get("alert_id")), str(d.get("event"))) for d in docs}

    def record_notified(self, alert_id: str, event: str, at: str) -> None:
        key = f"{alert_id}/{event}"
        doc = {"alert_id": alert_id, "event": event, "sent_at": at}
        self._call(lambda: self._notifications.update_one({"_id": key}, {"$setOnInsert": doc}, upsert=True))

    def delete_runs(self, run_ids: list[str]) -> int:
        if not run_ids:
            return 0
        return int(self._call(lambda: self._coll.delete_many({"_id": {"$in": run_ids}})).deleted_count)


def open_history(results: Path | None = None, url: str | None = None) -> History:
    """The history named by *url* (``mongodb://``/``mongodb+srv://``, or an SQLite file path), by
    ``$YCSB_RUNNER_HISTORY_URL``, or ``<results>/history.sqlite`` (*results*: default the results folder,
    ``$YCSB_RUNNER_RESULTS`` or results/)."""
    return history_at(config.current().history(url), results)


def history_at(url: str | None, results: Path | None = None) -> History:
    """The history at *url* as resolved (``config.Config.history``: the option over the environment); None:
    ``<results>/history.sqlite``."""
    if url is None:
        from ycsb_runner.paths import results_dir

        return SqliteHistory((results or results_dir()) / HISTORY_FILE)
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


def earlier_runs(
    results: Path, url: str | None, suite: str, target_url: str | None, most: int
) -> list[Manifest]:
    """The manifests of *suite*'s runs against the target of *target_url* (None: the embedded server of this
    host; ``lock.target_id``), newest first: of the folders the history at *url* (as resolved, see
    ``history_at``) lists, else of the run folders under *results*; the newest *most* folders read, one that
    cannot be read passed over."""
    import socket

    from ycsb_runner.safe.lock import target_id

    target = target_id(target_url, socket.gethostname())
    try:
        runs = history_at(url, results).runs()
    except UserError:
        runs = None
    folders: list[Path] = []
    if runs is not None and not runs.empty:
        mine = runs[runs["suite"] == suite].sort_values(["started_at", "run_id"], ascending=False)
        folders = [Path(f) for f in mine["folder"] if isinstance(f, str) and f]
    if not folders:
        folders = list(reversed(run_folders(results)))
    manifests = []
    for folder in folders[:most]:
        try:
            m = RunResult.load(folder).manifest
        except (UserError, OSError):
            continue
        ran_against = target_id(None if m.target.embedded else m.target.url, m.host.hostname)
        if m.suite.name == suite and ran_against == target:
            manifests.append(m)
    return sorted(manifests, key=lambda m: m.started_at, reverse=True)


def rebuild(
    results: Path, url: str | None = None, *, log: Callable[[str], None] = print
) -> tuple[History, int]:
    """Index every run folder under *results* again (damaged folders are skipped with a warning). A folder
    whose runner died (SIGKILL, power loss) is first marked ``killed`` the way the next ``bench`` marks it."""
    import socket

    from ycsb_runner.runs.model import mark_abandoned

    for stale in mark_abandoned(results, socket.gethostname()):
        log(f"marked {stale} as killed: the ycsb-runner that ran it no longer runs")
    records: dict[str, tuple[Path, RunRecord]] = {}
    for folder in run_folders(results):
        try:
            result = RunResult.load(folder)
            check_name(result.run_id, "its manifest's run id")  # as bench checks it
            if result.run_id in records:
                _duplicate(records, result.run_id, folder, log)
                continue
            try:
                records[result.run_id] = (folder, run_record(result))
            except (UserError, KeyError, ValueError, TypeError, AttributeError) as err:
                if result.manifest.status == "completed":
                    raise
                # a run killed while it wrote its files: listed (never judged), without figures
                records[result.run_id] = (folder, run_record(result, figures=False))
                log(f"warning: {folder.name} ({result.manifest.status}) indexed without figures: {err}")
        except UserError as err:
            log(f"warning: skipped {folder.name}: {err}")
        except (KeyError, ValueError, TypeError, AttributeError) as err:  # a file of the wrong shape
            log(f"warning: skipped {folder.name}: damaged ({type(err).__name__}: {str(err)[:80]})")
    history = open_history(results, url)
    return history, history.replace_all(record for _, record in records.values())


def _duplicate(
    records: dict[str, tuple[Path, RunRecord]], run_id: str, folder: Path, log: Callable[[str], None]
) -> None:
    """A second folder with *run_id* (a copy such as ``cp -r night-19 night-19-copy``): one run is indexed
    once, from the folder named as the run id (else the first in name order); the warning names both."""
    kept = records[run_id][0]
    if folder.name == run_id and kept.name != run_id:  # the copy came first in name order
        records[run_id] = (folder, run_record(RunResult.load(folder)))
        kept, folder = folder, kept
    log(
        f"warning: run id {run_id} is in two folders, {kept.name} and {folder.name}: indexed from "
        f"{kept.name}; remove or rename the copy {folder.name}"
    )


# --- querying ----------------------------------------------------------------------------------------------


@dataclass
class RunFilter:
    suite: str | None = None
    tags: dict[str, str] | None = None
    since: str | None = None
    until: str | None = None
    status: str | None = None


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
    from ycsb_runner.safe.text import UNSAFE

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


def option_time(text: str, option: str) -> float:
    """The time *text* (a date, 2026-12-01, or an ISO time) of option *option* as seconds since the epoch; a
    UserError naming the option when it is neither."""
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
    if f.status:  # before the start times are taken (a frame left empty would take their index)
        out = out[out["status"] == f.status]
    for k, v in (f.tags or {}).items():  # a run without the key does not match, whatever the value
        out = out[out["tags"].map(lambda t, k=k, v=v: isinstance(t, dict) and k in t and str(t[k]) == v)]
    start = out["started_at"].map(lambda s: epoch_of(s) if isinstance(s, str) else math.nan)
    if f.since:
        since = start >= option_time(f.since, "--since")
        out, start = out[since], start[since]
    if f.until:
        limit = option_time(f.until, "--until")
        if "T" not in f.until and " " not in f.until:
            limit += 86400  # a date includes that whole day
        out, start = out[start < limit], start[start < limit]
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

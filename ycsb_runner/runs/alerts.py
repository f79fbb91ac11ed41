"""Alerts: one per flagged series of a suite and the night its change began, with a triage state.

``regress`` records an alert for every series it flags (a regression or an improvement) and marks recovered
those whose series no longer flags; ``regress triage`` sets a state (who, when, why, a link), ``regress
accept`` sets ``accepted``. The states are stored in the history (``History.record_alerts/alerts/triage/
mark_recovered``), on SQLite and MongoDB alike. An alert's id is stable: the same suite, series and change
run give the same id on every judgement and every back-end.

:func:`precision` is the history's own measure of its detector, computed from triage: of the alerts someone
triaged, how many were invalid (noise: the detector was wrong), and how long it took from alert to first
triage.
"""

from __future__ import annotations

import hashlib
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ycsb_runner.runs.series import SERIES_KEYS, series_id

UNTRIAGED = "untriaged"
ACCEPTED = "accepted"
INVALID = "invalid"
STATES = (
    UNTRIAGED,
    "acknowledged",
    "investigating",
    INVALID,
    "fixed",
    "backed-out",
    "wontfix",
    ACCEPTED,
)
#: the states a user sets with ``regress triage`` (untriaged is the start, accepted is ``regress accept``'s)
TRIAGE_STATES = tuple(s for s in STATES if s not in (UNTRIAGED, ACCEPTED))
#: states that close an alert: its nights are no longer needed to tell its story (``history prune``)
CLOSED_STATES = ("fixed", INVALID, ACCEPTED, "backed-out", "wontfix")
DIRECTIONS = ("regression", "improvement")

ALERT_FIELDS = (
    "alert_id",
    "suite",
    "series",
    "direction",
    "change_pct",
    "change_run",
    "raised_run",
    "raised_at",
    "status",
    "status_by",
    "status_at",
    "why",
    "link",
    "first_triaged_at",
    "recovered_run",
    "baseline_run",
)


def alert_id(suite: str, series: tuple[str, ...], change_run: str) -> str:
    """The stable id of the alert of *series* (``history.series_id`` of its SERIES_KEYS values) of *suite*
    whose change began at *change_run*: "a" and 10 hex digits of a SHA-256."""
    text = "\x1f".join([suite, *series, change_run])
    return "a" + hashlib.sha256(text.encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Alert:
    alert_id: str
    suite: str
    series: dict[str, str]  # SERIES_KEYS -> text
    direction: str  # "regression" | "improvement"
    change_pct: float | None
    change_run: str
    raised_run: str
    raised_at: str  # ISO UTC
    status: str = UNTRIAGED  # one of STATES
    status_by: str | None = None
    status_at: str | None = None
    why: str | None = None
    link: str | None = None
    first_triaged_at: str | None = None
    recovered_run: str | None = None
    baseline_run: str | None = None  # the first night of the baseline it was judged against (history prune)

    @property
    def series_key(self) -> tuple[str, ...]:
        return series_id(self.series.get(k, "") for k in SERIES_KEYS)

    @property
    def open(self) -> bool:
        """Whether the alert still asks for attention: not closed by a state and not recovered."""
        return self.status not in CLOSED_STATES and not self.recovered_run

    def record(self) -> dict[str, Any]:
        """The alert as a plain dict (ALERT_FIELDS; series as a dict)."""
        return {f: (dict(self.series) if f == "series" else getattr(self, f)) for f in ALERT_FIELDS}

    def flat(self) -> dict[str, Any]:
        """The alert as one flat row (series keys as columns) for a table, CSV or JSON."""
        row = self.record()
        series = row.pop("series")
        return {"alert_id": row.pop("alert_id"), "suite": row.pop("suite"), **series, **row}


def from_record(rec: dict[str, Any]) -> Alert:
    """An Alert from a stored record (SQLite row with series as a dict, or a MongoDB document)."""
    series = rec.get("series") or {}
    pct = rec.get("change_pct")
    return Alert(
        alert_id=str(rec["alert_id"]),
        suite=str(rec["suite"]),
        series={k: str(series.get(k, "")) for k in SERIES_KEYS},
        direction=str(rec["direction"]),
        change_pct=None if pct is None else float(pct),
        change_run=str(rec["change_run"]),
        raised_run=str(rec["raised_run"]),
        raised_at=str(rec["raised_at"]),
        status=str(rec.get("status") or UNTRIAGED),
        **{
            k: (None if rec.get(k) in (None, "") else str(rec[k]))
            for k in (
                "status_by",
                "status_at",
                "why",
                "link",
                "first_triaged_at",
                "recovered_run",
                "baseline_run",
            )
        },
    )


def check_state(status: str, allowed: Iterable[str] = TRIAGE_STATES) -> str:
    """*status* when it is one of *allowed*; else a UserError listing them."""
    from ycsb_runner.errors import UserError

    allowed = tuple(allowed)
    if status not in allowed:
        raise UserError(f"--status {status!r}: expected one of {', '.join(allowed)}")
    return status


@dataclass(frozen=True)
class Precision:
    """The detector's precision from triage: *triaged* alerts (a state other than untriaged), *invalid* of
    them, and the hours from alert to first triage (median, 80th percentile; None with none triaged)."""

    triaged: int
    invalid: int
    median_h: float | None
    p80_h: float | None

    @property
    def invalid_pct(self) -> float | None:
        return 100.0 * self.invalid / self.triaged if self.triaged else None

    def line(self) -> str:
        if not self.triaged:
            return "no alert triaged yet: the history's precision cannot be told"
        assert self.median_h is not None and self.p80_h is not None
        return (
            f"of {self.triaged} triaged alerts, {self.invalid} invalid ({self.invalid_pct:.1f} %); time from "
            f"alert to first triage: median {_hours(self.median_h)}, p80 {_hours(self.p80_h)}"
        )


def _hours(h: float) -> str:
    return f"{h:.1f} h" if h < 48 else f"{h / 24:.1f} d"


def precision(alerts: Iterable[Alert]) -> Precision:
    """The :class:`Precision` of *alerts* (pure)."""
    from ycsb_runner.runs.model import epoch_of

    triaged = [a for a in alerts if a.status != UNTRIAGED]
    waits = []
    for a in triaged:
        t0, t1 = epoch_of(a.raised_at or None), epoch_of(a.first_triaged_at or a.status_at or None)
        if t0 is not None and t1 is not None:
            waits.append(max(0.0, (t1 - t0) / 3600))
    median = statistics.median(waits) if waits else None
    p80 = _quantile(sorted(waits), 0.8) if waits else None
    return Precision(len(triaged), sum(a.status == INVALID for a in triaged), median, p80)


def _quantile(xs: list[float], q: float) -> float:
    """The *q* quantile of sorted *xs* (linear between the closest ranks)."""
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def alerts_frame(alerts: Iterable[Alert], status: str | None = None) -> Any:
    """*alerts* (of *status*, one of STATES, or every one) as one flat row each (``Alert.flat``), newest
    raised first: what ``ycsb-runner alerts`` prints."""
    import pandas as pd

    columns = ["alert_id", "suite", *SERIES_KEYS, *ALERT_FIELDS[3:]]
    if status is not None:
        check_state(status, STATES)
    rows = [a.flat() for a in alerts if status is None or a.status == status]
    df = pd.DataFrame(rows, columns=columns)
    if df.empty:
        return df
    return df.sort_values(["raised_at", "alert_id"], ascending=False, kind="stable").reset_index(drop=True)

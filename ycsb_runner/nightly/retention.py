"""Keeping the history's growth in check: ``ycsb-runner history prune``.

:func:`plan_prune` chooses the runs to remove (started before a date, or all but the newest N per suite),
never a night an open alert still needs (from the first night of its baseline on: an alert that is not
fixed, invalid, accepted, backed out or won't fix, and has not recovered); :func:`prune` removes those runs
from the history and their folders. The dry run prints the plan the real run carries out: the same function
chooses both. A folder is removed only when the tool made it: directly inside the results folder, holding a
manifest of that run.
"""

from __future__ import annotations

import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ycsb_runner.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

    from ycsb_runner.runs.alerts import Alert
    from ycsb_runner.runs.history import History

PLAN_COLUMNS = ["run_id", "suite", "started_at", "status", "folder"]


@dataclass
class PrunePlan:
    """*remove*: the runs to remove (PLAN_COLUMNS; ``folder`` the folder to delete, "" when it is not one the
    tool made under the results folder); *kept*: run ids the rule chose but an open alert keeps, with the
    alert ids that keep them."""

    remove: pd.DataFrame
    kept: dict[str, list[str]] = field(default_factory=dict)

    @property
    def run_ids(self) -> list[str]:
        return [str(r) for r in self.remove["run_id"]]


def _start(runs: pd.DataFrame) -> pd.Series:
    from ycsb_runner.runs.model import epoch_of

    return runs["started_at"].map(lambda s: epoch_of(s) if isinstance(s, str) and s else math.nan)


def protected_runs(runs: pd.DataFrame, alerts: list[Alert]) -> dict[str, list[str]]:
    """Run id -> the open alerts that need it: per open alert, its suite's runs from its baseline's first
    night (its change night when the baseline is not known) on."""
    if runs.empty:
        return {}
    start = _start(runs)
    out: dict[str, list[str]] = {}
    for a in alerts:
        if not a.open:
            continue
        mine = runs["suite"] == a.suite
        first = a.baseline_run or a.change_run
        at = start[runs["run_id"] == first]
        since = float(at.iloc[0]) if len(at) and at.iloc[0] == at.iloc[0] else -math.inf  # unknown: all
        for rid in runs.loc[mine & ~(start < since), "run_id"]:
            out.setdefault(str(rid), []).append(a.alert_id)
    return out


def own_folder(folder: object, run_id: str, results: Path) -> Path | None:
    """The run's folder when the tool made it: the recorded *folder*, else ``results/<run_id>`` (a results
    folder moved or copied since), when it is directly in *results* (not through a link) and holds the
    run's manifest; else None."""
    for candidate in (folder, str(results / run_id)):
        if isinstance(candidate, str) and candidate and (found := _own(Path(candidate), run_id, results)):
            return found
    return None


def _own(path: Path, run_id: str, results: Path) -> Path | None:
    import json

    from ycsb_runner.runs.model import MANIFEST

    try:
        root = results.resolve()
        if path.is_symlink() or path.resolve().parent != root or not (path / MANIFEST).is_file():
            return None
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return path if isinstance(manifest, dict) and manifest.get("run_id") == run_id else None


def plan_prune(
    history: History,
    results: Path,
    *,
    before: str | None = None,
    keep: int | None = None,
    suite: str | None = None,
) -> PrunePlan:
    """The runs ``history prune`` removes: started before *before* (a date or ISO time), or all but the
    newest *keep* of each suite (of *suite* only, when given), less those an open alert needs."""
    import pandas as pd

    from ycsb_runner.runs.history import option_time

    if (before is None) == (keep is None):
        raise UserError("history prune: give --before DATE or --keep N (one of them)")
    if keep is not None and keep < 1:
        raise UserError(f"--keep {keep}: keep at least 1 night per suite")
    runs = history.runs()
    if suite is not None and (runs.empty or suite not in set(runs["suite"])):
        from ycsb_runner.nightly.regress_service import unknown_suite

        raise UserError(unknown_suite(suite, runs) or f"no runs of suite {suite!r}")
    if runs.empty:
        return PrunePlan(pd.DataFrame(columns=PLAN_COLUMNS))
    runs = runs.assign(_t=_start(runs)).sort_values(["_t", "run_id"], kind="stable", na_position="first")
    mine = runs if suite is None else runs[runs["suite"] == suite]
    if before is not None:
        limit = option_time(before, "--before")
        chosen = mine[~(mine["_t"] >= limit)]  # a run with no start time is older than any date
    else:
        assert keep is not None
        chosen = mine[mine.groupby("suite", sort=False).cumcount(ascending=False) >= keep]
    need = protected_runs(runs, history.alerts())
    kept = {str(r): need[str(r)] for r in chosen["run_id"] if str(r) in need}
    gone = chosen[~chosen["run_id"].astype(str).isin(kept)]
    folders = [
        str(own_folder(f, str(r), results) or "") for r, f in zip(gone["run_id"], gone["folder"], strict=True)
    ]
    remove = gone.assign(folder=folders)[PLAN_COLUMNS].reset_index(drop=True)
    return PrunePlan(remove, kept)


@dataclass
class PruneOutcome:
    plan: PrunePlan
    runs_removed: int
    folders_removed: int
    latest: str = ""  # what became of results/latest when it pointed to a removed run ("": untouched)


def prune(history: History, plan: PrunePlan, results: Path | None = None) -> PruneOutcome:
    """Remove the plan's runs from the history (one transaction on SQLite), then their folders; when
    *results*/latest pointed to a removed folder, it points to the newest run folder left (or goes)."""
    n = history.delete_runs(plan.run_ids)
    folders = 0
    removed = []
    for folder in plan.remove["folder"]:
        if folder:
            shutil.rmtree(folder)
            folders += 1
            removed.append(Path(folder).name)
    latest = repoint_latest(history, results, set(removed)) if results is not None and removed else ""
    return PruneOutcome(plan, n, folders, latest)


def repoint_latest(history: History, results: Path, removed: set[str]) -> str:
    """``results/latest`` after its run folder was removed (one of *removed*, names in *results*): pointed to
    the newest run folder of the history left, or removed when none is left. Only the link ``bench`` makes
    (a symlink to a bare folder name in *results*) is touched; anything else of that name is left alone.
    What was done, in words ("" when nothing)."""
    import os

    from ycsb_runner.paths import point_latest

    link = results / "latest"
    try:
        target = os.readlink(link) if link.is_symlink() else ""
    except OSError:
        return ""
    if not target or "/" in target or os.sep in target or target not in removed:
        return ""
    runs = history.runs()
    if not runs.empty:
        runs = runs.assign(_t=_start(runs)).sort_values(["_t", "run_id"], kind="stable", na_position="first")
    for rid, folder in zip(reversed(runs["run_id"].tolist()), reversed(runs["folder"].tolist()), strict=True):
        if (found := own_folder(folder, str(rid), results)) is not None:
            point_latest(results, found)
            return f"{link} now points to {found.name}"
    link.unlink()
    return f"{link} removed: no run folder is left"

"""``history prune`` (issue 46): the runs chosen by date or by count per suite, never a night of an open
alert (from its baseline on), the dry run lists what the real run removes, only the tool's own folders go."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from test_alerts import NOISE, TINY, make_alert
from test_regress import _nightly_history
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.errors import UserError
from ycsb_runner.nightly.retention import plan_prune
from ycsb_runner.runs.history import SqliteHistory


@pytest.fixture
def nights(tmp_path: Path) -> Path:
    results = tmp_path / "results"
    _nightly_history(results, [*NOISE, 0.6, 0.6, 0.6])  # night-00 .. night-10
    return results


def _csv(res: object) -> pd.DataFrame:
    assert res.exit_code == 0, res.output  # type: ignore[attr-defined]
    return pd.read_csv(io.StringIO(res.stdout))  # type: ignore[attr-defined]


def test_prune_keeps_an_open_alerts_nights_and_the_dry_run_is_the_real_run(nights: Path) -> None:
    h = SqliteHistory(nights / "history.sqlite")
    # an open alert of the suite judged from night-05 on; a closed one from night-01 (needs nothing)
    h.record_alerts([make_alert("night-08", suite=TINY, baseline_run="night-05")])
    h.record_alerts([make_alert("night-03", suite=TINY, baseline_run="night-01")])
    h.triage(make_alert("night-03", suite=TINY).alert_id, "invalid", "alice")
    runner = CliRunner()
    where = ["--results", str(nights)]
    dry = _csv(runner.invoke(app, ["history", "prune", *where, "--keep", "2", "--dry-run", "-f", "csv"]))
    assert dry["run_id"].tolist() == [f"night-{i:02d}" for i in range(5)]  # 05..08 kept for the alert
    assert all(Path(f).is_dir() for f in dry["folder"])
    assert len(h.runs()) == 11  # nothing removed
    real = _csv(runner.invoke(app, ["history", "prune", *where, "--keep", "2", "-f", "csv"]))
    assert real["run_id"].tolist() == dry["run_id"].tolist()
    left = sorted(h.runs()["run_id"])
    assert left == [f"night-{i:02d}" for i in range(5, 11)]
    assert not any(Path(f).exists() for f in dry["folder"])
    assert all((nights / r).is_dir() for r in left)
    assert h.metrics(dry["run_id"].tolist()).empty and not h.metrics(left).empty
    # the alert closed: its nights can go too (by date this time)
    h.triage(make_alert("night-08", suite=TINY).alert_id, "fixed", "bob")
    again = _csv(runner.invoke(app, ["history", "prune", *where, "--before", "2026-11-08", "-f", "csv"]))
    assert again["run_id"].tolist() == ["night-05", "night-06"]  # started 2026-11-06 and -07
    assert sorted(h.runs()["run_id"]) == [f"night-{i:02d}" for i in range(7, 11)]


def test_prune_removes_only_folders_the_tool_made(nights: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(nights / "night-00", elsewhere)
    h = SqliteHistory(nights / "history.sqlite")
    con = __import__("sqlite3").connect(h.path)
    con.execute("UPDATE runs SET folder = ? WHERE run_id = 'night-00'", (str(elsewhere),))
    manifest = json.loads((nights / "night-01" / "manifest.json").read_text())
    manifest["run_id"] = "someone-else"  # a folder holding another run's manifest
    (nights / "night-01" / "manifest.json").write_text(json.dumps(manifest))
    con.commit()
    con.close()
    plan = plan_prune(h, nights, keep=9)
    # night-00's recorded folder is not in the results folder: its folder there (a moved results folder)
    # is the one removed; night-01's holds another run's manifest: not ours
    assert plan.run_ids == ["night-00", "night-01"]
    assert plan.remove["folder"].tolist() == [str(nights / "night-00"), ""]
    res = CliRunner().invoke(app, ["history", "prune", "--results", str(nights), "--keep", "9"])
    assert res.exit_code == 0, res.output
    assert "removed 2 runs from the history and 1 run folders" in res.stderr
    assert elsewhere.is_dir() and (nights / "night-01").is_dir() and not (nights / "night-00").exists()


def test_prune_refuses_unclear_requests(nights: Path) -> None:
    h = SqliteHistory(nights / "history.sqlite")
    for kw, says in [
        ({}, "give --before DATE or --keep N"),
        ({"before": "2026-11-01", "keep": 3}, "give --before DATE or --keep N"),
        ({"keep": 0}, "keep at least 1"),
        ({"before": "yesterday"}, "expected a date"),
        ({"keep": 3, "suite": "tencent-analyse-tinx"}, "did you mean"),
    ]:
        with pytest.raises(UserError, match=says):
            plan_prune(h, nights, **kw)  # type: ignore[arg-type]
    assert len(h.runs()) == 11


# --- host identity: regress names the load generator and server, marks or splits at a change -------------


def _moved(results: Path, first: int, host: str = "new-box") -> None:
    """The nights from *first* on ran on another load generator (their manifests say so); history rebuilt."""
    for folder in sorted(results.glob("night-*")):
        if int(folder.name.split("-")[1]) >= first:
            m = json.loads((folder / "manifest.json").read_text())
            m["host"]["hostname"] = host
            (folder / "manifest.json").write_text(json.dumps(m))
    assert CliRunner().invoke(app, ["history", "rebuild", "--results", str(results)]).exit_code == 0


def test_regress_names_the_host_and_marks_or_splits_at_a_change(nights: Path) -> None:
    runner = CliRunner()
    where = ["--results", str(nights)]
    res = runner.invoke(app, ["regress", TINY, *where], env={"COLUMNS": "200"})
    assert "ran on load generator vm, server ferretdb" in res.stdout + res.stderr
    assert "host changed" not in res.stdout + res.stderr
    _moved(nights, 8)  # the slowdown began on the night the load generator changed
    res = runner.invoke(app, ["regress", TINY, *where, "-f", "json"])
    assert res.exit_code == 1
    rows = json.loads(res.stdout)["rows"]
    assert rows and all("host changed at night-08" in r["note"] for r in rows if r["verdict"] != "untested")
    res = runner.invoke(app, ["regress", TINY, *where], env={"COLUMNS": "200"})
    out = res.stdout + res.stderr
    assert "ran on load generator new-box" in out
    assert (
        "host changed at night-08: load generator vm, server ferretdb" in out
        and "-> load generator new-box" in out
    )
    # split: only the three nights of the new host, too few to judge: could not tell, never a regression
    res = runner.invoke(app, ["regress", TINY, *where, "--on-host-change", "split", "-f", "json"])
    doc = json.loads(res.stdout)
    assert res.exit_code == 2 and doc["runs"] == 3, doc["decision"]
    res = runner.invoke(app, ["regress", TINY, *where, "--on-host-change", "both"])
    assert isinstance(res.exception, UserError) and "use mark or split" in str(res.exception)


def test_prune_repoints_results_latest_to_the_newest_run_left_or_removes_it(nights: Path) -> None:
    """results/latest (the link bench keeps) pointing to a pruned run: repointed to the newest run left, or
    removed when none is; a link to a run kept, or a folder of that name the tool did not make, stays."""
    runner = CliRunner()
    where = ["--results", str(nights)]
    latest = nights / "latest"
    latest.symlink_to("night-03")  # (a run bench made before the history was rebuilt: an old one)
    res = runner.invoke(app, ["history", "prune", *where, "--before", "2026-11-05", "-f", "csv"])
    assert res.exit_code == 0, res.output
    assert not (nights / "night-03").exists()
    assert latest.is_symlink() and Path(os.readlink(latest)) == Path("night-10"), res.output
    assert (latest / "manifest.json").is_file() and "now points to night-10" in res.stderr
    # a link to a run that stays is left as it is
    latest.unlink()
    latest.symlink_to("night-06")
    assert runner.invoke(app, ["history", "prune", *where, "--before", "2026-11-06"]).exit_code == 0
    assert Path(os.readlink(latest)) == Path("night-06")
    # every run pruned: the link goes (nothing left to point to); the folders the tool did not make stay
    (nights / "mine").mkdir()
    latest.unlink()
    latest.symlink_to("night-10")
    res = runner.invoke(app, ["history", "prune", *where, "--before", "2030-01-01"])
    assert res.exit_code == 0, res.output
    assert not latest.exists() and not latest.is_symlink() and "no run folder is left" in res.stderr
    assert (nights / "mine").is_dir() and (nights / "history.sqlite").is_file()


def test_prune_leaves_a_latest_the_tool_did_not_make(nights: Path) -> None:
    (nights / "latest").mkdir()  # a folder of that name, not bench's link
    (nights / "latest" / "notes.txt").write_text("mine")
    res = CliRunner().invoke(app, ["history", "prune", "--results", str(nights), "--before", "2030-01-01"])
    assert res.exit_code == 0, res.output
    assert (nights / "latest" / "notes.txt").read_text() == "mine"
    assert not any((nights / f"night-{i:02d}").exists() for i in range(11))

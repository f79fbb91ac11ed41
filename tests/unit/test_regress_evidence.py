"""The evidence of each flagged series of ``regress``: its nights, noise model and p-values, and what else
moved on its nights (the step's other series, the server's and the client host's counters from the run
folders), in -f json, the terminal's one line per series and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from test_regress import NOISE, _nightly_folders
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.nightly.evidence import Moved, moved, nights


def test_moved_is_largest_first_in_words() -> None:
    figures = {
        "b1": {"cpu": 10.0, "evictions": 5.0, "conns": 8.0, "flat": 100.0},
        "b2": {"cpu": 10.0, "evictions": 5.0, "conns": 8.0, "flat": 100.0},
        "t1": {"cpu": 10.2, "evictions": 20.0, "conns": 2.0, "flat": 100.5},
    }
    got = moved(figures, ["b1", "b2"], ["t1"])
    assert [m.text for m in got] == ["evictions x4.0", "conns /4.0", "cpu +2 %"]  # flat: under 1 %
    assert Moved("x", 0.0, 3.0).text == "x from 0 to 3" and Moved("x", 2.0, 50.0).text == "x x25"
    row = {"baseline_from": "n1", "baseline_nights": 2, "change_run": "n4", "window_nights": 2}
    assert nights(row, ["n0", "n1", "n2", "n3", "n4", "n5"]) == (["n1", "n2"], ["n4", "n5"])


def _throttled_history(results: Path) -> CliRunner:
    """Nine nights, the last two 40 % slower (the client's figures) with the server's CPU doubled and its
    update rate down 40 % in their run folders."""
    _nightly_folders(results, [*NOISE, 0.6, 0.6])
    for night in ("night-07", "night-08"):
        path = results / night / "server_metrics.csv"
        sm = pd.read_csv(path)
        sm["cpu_pct"] *= 2
        sm["update_per_s"] *= 0.6
        sm.to_csv(path, index=False)
    runner = CliRunner()
    assert runner.invoke(app, ["history", "rebuild", "--results", str(results)]).exit_code == 0
    return runner


def test_flagged_series_carry_their_evidence(tmp_path: Path) -> None:
    results = tmp_path / "results"
    runner = _throttled_history(results)
    base = ["regress", "tencent-analyse-tiny", "--results", str(results)]
    out = runner.invoke(app, [*base, "-f", "json", "--all"])
    assert out.exit_code == 1, out.output
    rows = json.loads(out.stdout)["rows"]
    flagged = [r for r in rows if r["verdict"] == "regression"]
    assert flagged and all(r["evidence"] is None for r in rows if r["verdict"] != "regression")
    tp = next(r for r in flagged if r["mix"] == "read50_update50" and r["metric"] == "throughput_ops_s")
    ev = tp["evidence"]
    assert [n["run"] for n in ev["tested_nights"]] == ["night-07", "night-08"]
    assert (
        len(ev["baseline_nights"]) == tp["baseline_nights"] and ev["baseline_nights"][0]["run"] == "night-00"
    )
    assert ev["p_value"] == tp["p_value"] and ev["p_adjusted"] == tp["p_adjusted"]
    assert ev["noise"]["model"] == tp["noise"] and ev["noise"]["spread_pct"] > 0
    assert ev["noise"]["estimate"].startswith("the series' own, shrunk toward its suite's (")
    assert (
        "its spread at least its own over its nights, shrunk toward its metric's" in ev["noise"]["estimate"]
    )
    texts = [m["text"] for m in ev["moved"]]
    assert "server CPU x2.0" in texts and "server update per s -40 %" in texts and "READ avg +67 %" in texts
    sizes = [abs(m["after"] / m["before"] - 1) for m in ev["moved"] if m["before"]]
    assert texts.index("server CPU x2.0") < texts.index("server update per s -40 %")  # largest first
    assert ev["folders_not_read"] == [] and ev["summary"].startswith(texts[0]) and sizes
    terminal = runner.invoke(app, [*base, "--report", str(tmp_path / "rep")])
    said = [f"{r['mix']} t2 {r['operation']} {r['metric']}: " for r in flagged]
    lines = [x for x in terminal.stdout.splitlines() if x.startswith(tuple(said))]
    assert len(lines) == len(flagged), terminal.stdout  # one line per flagged series
    assert sum("server CPU x2.0" in x for x in lines) == sum(r["phase"] == "run" for r in flagged)
    md = (tmp_path / "rep" / "regress.md").read_text()
    assert md.count("## Evidence: ") == len(flagged) and "server CPU x2.0" in md


def test_evidence_says_which_folders_it_could_not_read(tmp_path: Path) -> None:
    results = tmp_path / "results"
    runner = _throttled_history(results)
    (results / "night-08" / "manifest.json").rename(results / "night-08" / "gone.json")
    out = runner.invoke(app, ["regress", "tencent-analyse-tiny", "--results", str(results), "-f", "json"])
    rows = json.loads(out.stdout)["rows"]
    ev = next(r["evidence"] for r in rows if r["verdict"] == "regression" and r["phase"] == "run")
    assert ev["folders_not_read"] == ["night-08"]
    assert "server CPU x2.0" in [m["text"] for m in ev["moved"]]  # night-07's folder still says it

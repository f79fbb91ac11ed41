"""``findmax`` on the embedded server, checked against an independent sweep of fixed targets.

The search runs first (workload C, 16 threads, a p99 bound); then the test runs plain ``bench`` steps at fixed
``-target`` rates around what it found and judges each from its own run folder (operations.csv, steps.csv),
not with the search's code: a target meets the bound when it achieved 97 % of it and every operation's p99
after the warm-up is within the bound. The found rate must lie within one resolution step of the sweep's
bracket [highest passing target, the next target of the grid], widened by one grid step for the drift of a
busy shared machine between the search and the sweep (minutes apart).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from ycsb_runner.bench import BenchOptions, run_bench, run_findmax
from ycsb_runner.findmax import FindmaxOptions, make_bound
from ycsb_runner.parse.hdr import read_hdr_log

pytestmark = pytest.mark.integration

SUITE = str(Path(__file__).parents[1] / "suites" / "findmax.toml")
P99 = "60ms"  # p99 is 15-41 ms at 100-300 ops/s, 77 ms at 400, ~200 ms saturated (README: findmax)
LIMIT_US = 60_000.0
PROBE_S = 6
RESOLUTION = 5.0
GRID = 1.12  # the sweep's step: about two resolution steps
SWEEP = (-3, -2, -1, 0, 1, 2, 3)


def _sweep_point(mongo_url: str, results: Path, target: int) -> tuple[bool, float, float]:
    """(met the bound, achieved ops/s, worst p99 µs) of one fixed-target bench, read from its folder."""
    out = run_bench(
        BenchOptions(
            suite=SUITE,
            url=mongo_url,
            results=results,
            overrides=[f"target={target}", f"maxexecutiontime={PROBE_S}", f"warmup_s={0.2 * PROBE_S:g}"],
            monitors=False,
            report=False,
            history=False,
            lock=False,
        ),
        log=lambda _m: None,
    )
    steps = pd.read_csv(out.run_dir / "steps.csv")
    run = steps[steps["phase"] == "run"].iloc[0]
    assert run["verdict"] == "completed", run["reasons"]
    ops = pd.read_csv(out.run_dir / "operations.csv", keep_default_na=False, na_values=[""])
    ops = ops[(ops["phase"] == "run") & (ops["kind"] == "op") & (ops["operation"] != "CLEANUP")]
    ops = ops[~ops["intended"].astype(str).str.lower().eq("true") & ops["outcome"].isna()]
    p99 = float(ops["p99_us"].max())
    # achieved: the operations of the whole 1-s intervals after the warm-up over their length (YCSB's
    # closing interval, a fraction of a second around its shutdown, is left out)
    done = seconds = 0.0
    for f in (out.run_dir / "steps" / run["step"] / "hdr").glob("*.hdr"):
        if f.stem == "CLEANUP" or f.stem.startswith("Intended-"):
            continue
        ivs = read_hdr_log(f).intervals
        first = min(iv.start_s for iv in ivs)
        kept = [iv for iv in ivs if iv.start_s >= first + 0.2 * PROBE_S - 1e-9 and iv.length_s >= 0.9]
        done += sum(iv.total for iv in kept)
        seconds = max(seconds, sum(iv.length_s for iv in kept))
    achieved = done / seconds
    return achieved >= 0.97 * target and p99 <= LIMIT_US, achieved, p99


def test_findmax_agrees_with_a_sweep_of_fixed_targets(mongo_url: str, tmp_path: Path) -> None:
    outcome = run_findmax(
        BenchOptions(suite=SUITE, url=mongo_url, results=tmp_path, monitors=False, lock=False),
        FindmaxOptions(
            mix=None, bound=make_bound(p99=P99), probe_s=PROBE_S, resolution_pct=RESOLUTION, start=100
        ),
        log=lambda _m: None,
    )
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    search = manifest["findmax"]
    found = search["max_ops_s"]
    probes = search["probes"]
    print("findmax probes:", [(p["target"], round(p["throughput_ops_s"]), p["latency_us"]) for p in probes])
    assert found is not None and search["converged"], search
    # one run step per probe, each at its own -target, judged on its steady-state window
    runs = [s for s in manifest["steps"] if s["phase"] == "run"]
    assert [s["step"] for s in runs] == [p["step"] for p in probes]
    for s, p in zip(runs, probes, strict=True):
        assert s["argv"][s["argv"].index("-target") + 1] == str(p["target"])
        assert (
            s["figures"]["warmup_s"] == pytest.approx(0.2 * PROBE_S)
            and s["figures"]["findmax_passed"] is p["passed"]
        )
    assert found in [p["target"] for p in probes if p["passed"]]
    assert search["lowest_failing_ops_s"] <= found * (1 + RESOLUTION / 100) + 1
    # the history has the found rate as its series; the report its curve
    with sqlite3.connect(tmp_path / "history.sqlite") as con:
        rows = con.execute("SELECT phase, metric, value FROM metrics WHERE phase = 'findmax'").fetchall()
    assert rows == [("findmax", "findmax_ops_s", float(found))]
    assert (outcome.run_dir / "report-figures" / "findmax.png").stat().st_size > 0
    assert "Max throughput: max" in (outcome.run_dir / "report.html").read_text()

    grid = sorted({max(1, round(found * GRID**k)) for k in SWEEP})
    sweep = {t: _sweep_point(mongo_url, tmp_path / "sweep", t) for t in grid}
    print("sweep:", {t: (ok, round(x), p99) for t, (ok, x, p99) in sweep.items()})
    failing = [t for t, (ok, _, _) in sweep.items() if not ok]
    below = [t for t, (ok, _, _) in sweep.items() if ok and (not failing or t < min(failing))]
    assert below, f"no swept target met the bound: {sweep}"
    best = max(below)
    step = 1 + RESOLUTION / 100
    assert best / (GRID * step) <= found <= best * GRID * GRID * step, (found, sweep)

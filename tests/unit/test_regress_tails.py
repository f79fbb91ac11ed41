"""Tails beyond p99 in the history and in regress: YCSB's percentiles gain 99.9, the history keeps p999_us
and max_us per step and operation, regress judges them like p99 (the canaries' tail rule included)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
from test_regress import RUNS, _history, _nights

from ycsb_runner.nightly.regress import REGRESSION, RegressOptions, regress
from ycsb_runner.prepare.commandline import step_properties
from ycsb_runner.prepare.plan import build_plan
from ycsb_runner.prepare.suite import load_suite
from ycsb_runner.runs.history import run_record
from ycsb_runner.runs.metrics import PERCENTILE_METRICS
from ycsb_runner.runs.model import RunResult


def test_percentiles_gain_99_9_where_not_set_and_keep_the_fingerprint() -> None:
    plan = build_plan(load_suite("quick"))
    step = next(s for s in plan.steps if s.kind == "run")
    props = step_properties(step, plan.suite)
    assert props["hdrhistogram.percentiles"].split(",")[-1] == "99.9"
    listed = build_plan(load_suite("quick", ["measurement.percentiles=[95, 99.9, 99]"]))
    again = step_properties(next(s for s in listed.steps if s.kind == "run"), listed.suite)
    assert again["hdrhistogram.percentiles"] == "95,99.9,99"  # listed: not added twice
    run = RunResult.load(RUNS / "tencent-analyse")
    before = run.manifest.fingerprint
    for s in run.manifest.steps:  # a run recorded with the tail percentile has the fingerprint of one without
        if "hdrhistogram.percentiles" in s.properties:
            s.properties["hdrhistogram.percentiles"] += ",99.9"
    assert run.manifest.fingerprint == before


def test_history_keeps_p999_and_max(tmp_path: Path) -> None:
    dst = Path(shutil.copytree(RUNS / "tencent-analyse", tmp_path / "run"))
    ops = pd.read_csv(dst / "operations.csv")
    ops["p99.9_us"] = ops["p99_us"] * 3
    ops.to_csv(dst / "operations.csv", index=False)
    rows = pd.DataFrame(run_record(RunResult.load(dst)).metrics)
    p999, p99 = (
        rows[rows["metric"] == m].set_index(["step", "operation"])["value"] for m in ("p999_us", "p99_us")
    )
    assert len(p999) == len(p99) > 0 and np.allclose(p999, 3 * p99.loc[p999.index])
    mx = rows[rows["metric"] == "max_us"]
    assert (
        len(mx) == len(p99)
        and (
            mx["value"].to_numpy() >= p99.loc[list(mx.set_index(["step", "operation"]).index)].to_numpy()
        ).all()
    )
    assert {"p999_us", "max_us"} <= PERCENTILE_METRICS  # the canaries' tail rule applies to them


def test_regress_flags_a_tail_that_moves_alone() -> None:
    nights = _nights(20)
    rng = np.random.default_rng(5)
    for i, n in enumerate(nights):
        n["p999_us"] = n["p99_us"] * 4 * float(np.exp(0.1 * rng.standard_normal()))
        n["max_us"] = n["p99_us"] * 20 * float(np.exp(0.3 * rng.standard_normal()))
        if i >= 18:  # the last two nights: p99.9 doubles, p99 +3 %, the rest as before
            n["p999_us"] *= 2
            n["p99_us"] *= 1.03
    out = regress(*_history(nights), "quick", RegressOptions())
    verdicts = dict(zip(out.table["metric"], out.table["verdict"], strict=True))
    assert verdicts["p999_us"] == REGRESSION and verdicts["throughput_ops_s"] != REGRESSION, verdicts
    assert verdicts["max_us"] != REGRESSION and out.exit_code == 1
    assert json.loads(out.table.to_json(orient="records"))  # (the new series serialise like the others)

"""The run-folder model: round trips, damaged folders, and one set of key columns in every CSV."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ycsb_runner.errors import UserError
from ycsb_runner.runs.columns import COLUMNS, results_markdown
from ycsb_runner.runs.model import (
    FORMAT_VERSION,
    KEY_COLUMNS,
    RunResult,
    StepKeys,
    StepRecord,
    SuiteInfo,
    add_keys,
    iso_utc,
    local_times_to_utc,
)

RUNS = Path(__file__).parents[1] / "data" / "runs"
ROOT = Path(__file__).parents[2]
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
CSVS = ("steps", "summary", "operations", "timeseries", "server_metrics", "client_metrics")


def _keys(step: str = "01-load-t2", phase: str = "load") -> StepKeys:
    return StepKeys(
        run_id="r", step=step, phase=phase, mix="load", workload="w", threads=2, audit="none", repetition=0
    )


def test_round_trip(tmp_path: Path) -> None:
    result = RunResult.create(tmp_path, SuiteInfo(name="s", study="tencent-threads", mixes=["a"]), run_id="r")
    rec = StepRecord(keys=_keys(), index=1, started_at=1_796_000_000.25, ended_at=1_796_000_003.5)
    rec.status, rec.throughput_ops_s, rec.figures = "completed", 12.5, {"server_cpu_pct": 3.0}
    result.manifest.steps = [rec]
    result.manifest.status = "completed"
    ops = pd.DataFrame({"kind": ["op"], "operation": ["READ"], "operations": [4], "p99": [7.0]})
    ops = add_keys(ops.assign(average_latency_us=[2.0]), rec.keys)
    result.save({"operations": ops})
    back = RunResult.load(tmp_path / "r")
    assert back.manifest.format_version == FORMAT_VERSION
    assert back.manifest.suite.study == "tencent-threads"
    assert back.manifest.steps[0] == rec
    columns = [*KEY_COLUMNS, "kind", "operation", "operations", "p99_us", "average_latency_us"]
    assert back.operations.columns.tolist() == columns
    row = back.steps.iloc[0]
    assert row["started_at"] == iso_utc(1_796_000_000.25) == "2026-11-30T00:53:20.250Z"
    assert row["duration_s"] == pytest.approx(3.25) and row["server_cpu_pct"] == 3.0


def test_iso_utc() -> None:
    assert iso_utc(0) == "1970-01-01T00:00:00.000Z"
    assert (
        iso_utc(1_796_109_196.3166) == "2026-12-01T07:13:16.316Z"
    )  # milliseconds truncated, like YCSB's own
    assert iso_utc(None) is None


def test_status_line_times_become_utc(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    try:
        out = local_times_to_utc(pd.Series(["2026-12-01 15:13:16.553", None]))
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert out.tolist() == ["2026-12-01T07:13:16.553Z", None]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"run_id": "x", "sta', "is damaged"),
        ("[1, 2]", "not a JSON object"),
        ('{"run_id": "x", "status": "completed", "steps": []}', "older ycsb-runner"),
        (json.dumps({"format_version": 99, "run_id": "x"}), "result format 99"),
        (json.dumps({"format_version": FORMAT_VERSION, "steps": [{"step": "x"}]}), "is damaged"),
    ],
)
def test_damaged_manifests_are_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "manifest.json").write_text(content)
    with pytest.raises(UserError, match=message) as err:
        RunResult.load(tmp_path)
    assert "\n" not in str(err.value)


def test_not_a_run_folder(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not a ycsb-runner result folder"):
        RunResult.load(tmp_path)


@pytest.mark.parametrize("run", ["tencent-analyse", "audit-analyse"])
def test_every_csv_has_the_same_keys(run: str) -> None:
    result = RunResult.load(RUNS / run)
    steps = result.steps.set_index("step")
    for name in CSVS:
        raw = pd.read_csv(RUNS / run / f"{name}.csv", nrows=0)
        assert raw.columns[: len(KEY_COLUMNS)].tolist() == list(KEY_COLUMNS), name
        df = result.frame(name)
        assert df["threads"].dtype.kind == "i" and df["repetition"].dtype.kind == "i", name
        # the same step has the same key values in every file
        for key, part in df.groupby("step"):
            want = steps.loc[key, list(KEY_COLUMNS[2:])].tolist()
            got = part[list(KEY_COLUMNS[2:])].drop_duplicates().values.tolist()
            assert got == [want], (name, key)
    assert set(result.steps["audit"]) <= {"off", "on", "none"}
    loads = result.steps[result.steps["phase"] == "load"]
    assert (loads["repetition"] == 0).all() and (loads["mix"] == "load").all()


def test_steps_operations_and_server_metrics_join_without_cleaning() -> None:
    runs = [RunResult.load(RUNS / n) for n in ("tencent-analyse", "audit-analyse")]
    ops = pd.concat([r.operations for r in runs], ignore_index=True)
    steps = pd.concat([r.steps for r in runs], ignore_index=True)
    server = pd.concat([r.server_metrics for r in runs], ignore_index=True)
    joined = ops.merge(steps, on=list(KEY_COLUMNS), suffixes=("", "_step"), validate="many_to_one")
    assert len(joined) == len(ops) and joined["status"].notna().all()
    per_step = server.groupby(list(KEY_COLUMNS))["cpu_pct"].mean().reset_index()
    with_cpu = steps.merge(per_step, on=list(KEY_COLUMNS))
    assert len(with_cpu) == len(per_step) > 0


@pytest.mark.parametrize("run", ["tencent-analyse", "audit-analyse"])
def test_times_are_iso_utc(run: str) -> None:
    result = RunResult.load(RUNS / run)
    for name, cols in (
        ("steps", ["started_at", "ended_at"]),
        ("timeseries", ["time"]),
        ("server_metrics", ["time"]),
    ):
        df = result.frame(name)
        for col in cols:
            values = df[col].dropna()
            assert not values.empty and values.map(lambda v: bool(ISO.match(v))).all(), (name, col)
    manifest = json.loads((RUNS / run / "manifest.json").read_text())
    assert ISO.match(manifest["started_at"]) and ISO.match(manifest["steps"][0]["started_at"])


def test_latency_columns_carry_their_unit() -> None:
    result = RunResult.load(RUNS / "tencent-analyse")
    for name in ("operations", "timeseries"):
        cols = result.frame(name).columns
        assert not [c for c in cols if re.fullmatch(r"p\d+(\.\d+)?|min|max|avg", c)], name
        assert "p99_us" in cols


@pytest.mark.parametrize("run", ["tencent-analyse", "audit-analyse"])
def test_results_md_documents_every_column(run: str) -> None:
    result = RunResult.load(RUNS / run)
    for name, documented in COLUMNS.items():
        patterns = [
            re.escape(c)
            .replace(r"<N>", r"[\d.]+")
            .replace(r"<STATUS>", r"[A-Z_]+")
            .replace(r"<op>", r"\w+")
            .replace(r"\*", r"\w+")
            for c in [*KEY_COLUMNS, *documented]
        ]
        for col in result.frame(name).columns:
            assert any(re.fullmatch(p, col) for p in patterns), (name, col)


def test_results_md_is_generated_from_the_model() -> None:
    assert (ROOT / "RESULTS.md").read_text() == results_markdown()


def test_write_frame_refuses_a_frame_without_keys(tmp_path: Path) -> None:
    result = RunResult.create(tmp_path, SuiteInfo(name="s"))
    with pytest.raises(ValueError, match="lacks key columns"):
        result.write_frame("operations", pd.DataFrame({"x": [1]}))
    shutil.rmtree(result.root)

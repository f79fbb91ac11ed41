"""``compare_runs`` from Python answers what ``ycsb-runner compare`` answers: it refuses runs made with
different settings unless forced, carries the caveats, and returns the gate's exit code, on copies of the
checked-in result folder of a real run (tests/data/runs/tencent-analyse)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from ycsb_runner import CompareOutcome, UserError, compare_runs

RUNS = Path(__file__).parents[1] / "data" / "runs"


def _copy(tmp_path: Path, name: str) -> Path:
    return Path(shutil.copytree(RUNS / "tencent-analyse", tmp_path / name))


def _with_records(run: Path, records: int) -> None:
    """*run*'s manifest rewritten as if it had run with ``--set recordcount=RECORDS``."""
    manifest = json.loads((run / "manifest.json").read_text())
    for step in manifest["steps"]:
        if "recordcount" in step.get("properties", {}):
            step["properties"]["recordcount"] = str(records)
    (run / "manifest.json").write_text(json.dumps(manifest))


def _repeated(run: Path, copies: int) -> None:
    """*run*'s measured run steps repeated *copies* more times (as if run with more repetitions)."""
    for name in ("steps", "operations"):
        df = pd.read_csv(run / f"{name}.csv")
        runs = df[df["phase"] == "run"]
        extra = [
            runs.assign(repetition=runs["repetition"] + 2 * k, step=runs["step"] + f"-c{k}")
            for k in range(1, copies + 1)
        ]
        pd.concat([df, *extra], ignore_index=True).to_csv(run / f"{name}.csv", index=False)


def test_different_settings_are_refused_unless_forced(tmp_path: Path) -> None:
    base, other = _copy(tmp_path, "a"), _copy(tmp_path, "b")
    _with_records(other, 600)
    with pytest.raises(UserError, match=r"different settings \(recordcount 300 vs 600\).*--force"):
        compare_runs(base, other)
    forced = compare_runs(base, other, force=True)
    assert isinstance(forced, CompareOutcome) and not forced.table.empty
    assert forced.caveats[0] == "DIFFERENT SETTINGS (--force): recordcount 300 vs 600"
    assert forced.warnings == forced.caveats and forced.fields["settings_differ"] == forced.caveats[0]
    assert forced.title.endswith("[DIFFERENT SETTINGS]") and forced.exit_code == 0 and forced.decision is None
    same = compare_runs(base, _copy(tmp_path, "c"))
    assert same.caveats == [] and same.caption is None and "DIFFERENT" not in same.title


def test_the_gate_is_the_exit_code(tmp_path: Path) -> None:
    """A contender whose read100 throughput is a tenth, at 10 + 10 repetitions: exit 1; with a minimum
    effect above the drop: exit 0; the same run against itself: exit 0; a run that did not complete
    (forced): exit 2."""
    base, slower = _copy(tmp_path, "base"), _copy(tmp_path, "slower")
    steps = pd.read_csv(slower / "steps.csv")
    steps.loc[steps["mix"] == "read100", "throughput_ops_s"] /= 10
    steps.to_csv(slower / "steps.csv", index=False)
    for run in (base, slower):
        _repeated(run, 4)
    bad = compare_runs(base, slower, fail_on_regression=True)
    assert bad.exit_code == 1 and bad.decision == "performance regressed: read100 throughput_ops_s -90.0%"
    assert "p_adjusted" in bad.table
    assert compare_runs(base, slower, fail_on_regression=True, min_effect_pct=95).exit_code == 0
    ungated = compare_runs(base, slower)
    assert ungated.exit_code == 0 and ungated.decision is None and "p_adjusted" not in ungated.table
    assert compare_runs(base, base, fail_on_regression=True).exit_code == 0
    cut = _copy(tmp_path, "cut")
    manifest = json.loads((cut / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (cut / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(UserError, match="cut is interrupted"):
        compare_runs(base, cut, fail_on_regression=True)
    forced = compare_runs(RUNS / "tencent-analyse", cut, fail_on_regression=True, force=True)
    assert forced.exit_code == 2 and "cut is interrupted" in (forced.decision or "")
    assert forced.caveats[0].startswith("FAILED RUN (--force)")


def test_a_reference_compare_and_bad_arguments(tmp_path: Path) -> None:
    run = _copy(tmp_path, "t")
    out = compare_runs(run, reference="tencent-mongodb44", size="4C8G")
    assert out.reference == "tencent-mongodb44" and set(out.table["size"]) == {"4C8G"}
    assert out.contender is None and out.exit_code == 0
    assert out.save() == run / "compare-tencent-mongodb44.csv" and out.save().is_file()
    with pytest.raises(UserError, match="--alpha 2"):
        compare_runs(run, run, alpha=2)
    with pytest.raises(UserError, match="not both"):
        compare_runs(run, run, reference="tencent-mongodb44")
    with pytest.raises(UserError, match="with what"):
        compare_runs(run)

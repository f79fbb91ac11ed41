"""A Python user gets the answers the command prints: ``run_regress`` / ``accept_regressions`` (the
regress service) give regress's verdict, exit code and lines; ``check_bench`` / ``dry_run`` / ``run_bench``
give bench's pre-flight and dry run. The option groups the commands share take their defaults from the
library."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from test_regress import NOISE, _nightly_history
from typer.testing import CliRunner

from ycsb_runner import BenchOptions, run_bench
from ycsb_runner.bench import check_bench, dry_run
from ycsb_runner.cli import app
from ycsb_runner.cli.groups import BENCH_TARGET, REGRESS
from ycsb_runner.errors import UserError
from ycsb_runner.nightly.regress_options import RegressOptions
from ycsb_runner.nightly.regress_service import accept_regressions, run_regress
from ycsb_runner.runs.history import RunFilter

SUITE = "tencent-analyse-tiny"
WIDE = {"COLUMNS": "200"}


@pytest.fixture(scope="module")
def slow(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = tmp_path_factory.mktemp("service") / "results"
    _nightly_history(results, [*NOISE, 0.6, 0.6])  # seven normal nights, two 40 % slower
    return results


@pytest.mark.parametrize(
    ("argv", "options", "filt"),
    [
        ([], RegressOptions(), RunFilter()),  # a regression: exit 1
        (["--until", "2026-11-02"], RegressOptions(), RunFilter(until="2026-11-02")),  # too few nights: 2
        (
            ["--until", "2026-11-07", "--min-effect", "25"],
            RegressOptions(min_effect_pct=25),
            RunFilter(until="2026-11-07"),
        ),
        (
            ["--metric", "p99_us", "--alpha", "0.05"],
            RegressOptions(metrics=("p99_us",), alpha=0.05),
            RunFilter(),
        ),
    ],
)
def test_run_regress_says_what_the_command_prints(
    slow: Path, argv: list[str], options: RegressOptions, filt: RunFilter
) -> None:
    out = run_regress(SUITE, options, filt, results=slow)
    where = ["--results", str(slow)]
    res = CliRunner().invoke(app, ["regress", SUITE, *where, *argv], env=WIDE)
    assert res.exit_code == out.exit_code, res.output
    assert res.stderr.rstrip().endswith(out.closing.split("; exit")[-1])  # the closing line, with the code
    assert " ".join(out.closing.split()) in " ".join(res.stderr.split())  # (folded to the terminal's width)
    for line in out.changes:
        assert line in res.stdout
    doc = json.loads(CliRunner().invoke(app, ["regress", SUITE, *where, *argv, "-f", "json"]).stdout)
    assert (doc["exit_code"], doc["decision"]) == (out.exit_code, out.decision)
    assert doc["regressions"] == out.result.summary()["regressions"]


def test_the_verdicts_differ_between_the_cases(slow: Path) -> None:
    """(The comparison above would pass on a service that always answered the same.)"""
    codes = {
        run_regress(SUITE, results=slow).exit_code,
        run_regress(SUITE, filt=RunFilter(until="2026-11-02"), results=slow).exit_code,
        run_regress(
            SUITE, RegressOptions(min_effect_pct=25), RunFilter(until="2026-11-07"), results=slow
        ).exit_code,
    }
    assert codes == {0, 1, 2}
    out = run_regress(SUITE, results=slow)
    assert out.changes[0].startswith("open since night-07") and out.decision in out.closing


def test_run_regress_refuses_as_the_command_does(slow: Path) -> None:
    with pytest.raises(UserError, match="--correction 'bonferroni'"):
        run_regress(SUITE, RegressOptions(correction="bonferroni"), results=slow)
    with pytest.raises(UserError, match="--metric 'p98_us': known metrics are"):
        run_regress(SUITE, RegressOptions(metrics=("p98_us",)), results=slow)
    with pytest.raises(
        UserError,
        match="no runs of suite 'tencent-analyse-tin' in the history \\(did you mean 'tencent-analyse-tiny'",
    ):
        run_regress("tencent-analyse-tin", results=slow)
    res = CliRunner().invoke(app, ["regress", SUITE, "--results", str(slow), "--metric", "p98_us"])
    assert isinstance(res.exception, UserError) and "--metric 'p98_us'" in str(res.exception)


def test_accept_regressions_records_what_regress_accept_would(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _nightly_history(results, [*NOISE, 0.6, 0.6])
    with pytest.raises(UserError, match="--why is empty"):
        accept_regressions(SUITE, " ", results=results)
    done = accept_regressions(SUITE, "new build", by="alice", operations=["READ"], results=results)
    assert done.rows and {r["operation"] for r in done.rows} == {"READ"}
    assert done.message.startswith(f"accepted {len(done.rows)} series of {SUITE} (changes since night-07)")
    after = run_regress(SUITE, results=results)
    assert any(line.startswith("accepted night-07 by alice") for line in after.changes)
    res = CliRunner().invoke(app, ["regress", SUITE, "--results", str(results)], env=WIDE)
    assert res.exit_code == after.exit_code and all(line in res.stdout for line in after.changes)
    accept_regressions(SUITE, "the rest", by="bob", results=results)
    with pytest.raises(UserError, match=f"nothing open to accept in {SUITE}") as nothing:
        accept_regressions(SUITE, "again", by="bob", results=results)
    assert nothing.value.exit_code == 2


def test_dry_run_is_the_text_render_prints() -> None:
    opts = BenchOptions(suite="quick", overrides=["threads=[2]"], scale=0.01)
    text, check = dry_run(opts)
    res = CliRunner().invoke(app, ["render", "quick", "--set", "threads=[2]", "--scale", "0.01"])
    assert res.exit_code == 0 and res.stdout == text
    assert check.error is None and len(check.plan.steps) > 1


def test_a_bench_the_preflight_refuses_stops_before_anything(tmp_path: Path) -> None:
    opts = BenchOptions(suite="quick", overrides=["mongodb.url_options.w=0"], results=tmp_path)
    check = check_bench(opts)
    assert check.error is not None and "unacknowledged writes" in check.error
    said: list[str] = []
    with pytest.raises(UserError, match="stopped before running: the embedded FerretDB server") as err:
        run_bench(opts, log=said.append)
    assert err.value.exit_code == 2 and list(tmp_path.iterdir()) == []  # no server, no run folder
    res = CliRunner().invoke(app, ["bench", "quick", "--set", "mongodb.url_options.w=0", "--dry-run"])
    assert isinstance(res.exception, UserError) and str(res.exception) == str(err.value)


def test_the_groups_defaults_are_the_librarys() -> None:
    bench = {f.name: f for f in dataclasses.fields(BenchOptions)}
    for name, (_, default) in BENCH_TARGET.options.items():
        field = bench[name]  # every option of the group fills a BenchOptions field of its name
        if field.default is not dataclasses.MISSING:
            assert default == field.default, name
    regress = RegressOptions()
    for name, (_, default) in REGRESS.options.items():
        if name == "ignore_canaries":
            assert default is not regress.canaries
        elif name != "metrics":
            assert default == getattr(regress, name), name
    assert REGRESS.build(**{n: d for n, (_, d) in REGRESS.options.items()}) == regress

"""What a newcomer hit on a fresh clone (issue 39, items 1-9 and 11): runs made with different settings are
not compared silently, no number is cut, advice names a setting that changes something, render refuses
what bench refuses, errors name the option typed, a missing run is named, a mistyped suite gets a
did-you-mean, ratios keep their significant digits, a report shows the settings the run ran with. On the
checked-in result folders of real runs (tests/data/runs/) and the shipped suites."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_terminal_width import assert_fits, cli
from typer.testing import CliRunner

from ycsb_runner.analyse.steady import stationarity
from ycsb_runner.cli import app
from ycsb_runner.errors import UserError
from ycsb_runner.present.output import cell_text
from ycsb_runner.report.run_report import metadata, steps_frame
from ycsb_runner.runs.model import RunResult

DATA = Path(__file__).parents[1] / "data"
RUNS = DATA / "runs"


def _copy(tmp_path: Path, name: str, as_name: str | None = None) -> Path:
    return Path(shutil.copytree(RUNS / name, tmp_path / (as_name or name)))


def _invoke(*args: str, env: dict | None = None):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80", **(env or {})})


def _with_records(run: Path, records: int) -> None:
    """*run*'s manifest rewritten as if it had run with ``--set recordcount=RECORDS``."""
    manifest = json.loads((run / "manifest.json").read_text())
    for step in manifest["steps"]:
        if "recordcount" in step.get("properties", {}):
            step["properties"]["recordcount"] = str(records)
    manifest["suite"]["scaling"] = {"scale": 1.0, "overrides": [f"recordcount={records}"]}
    (run / "manifest.json").write_text(json.dumps(manifest))


# ---------------------------------------------------------- 1: compare of runs with different settings
def test_compare_refuses_runs_made_with_different_settings(tmp_path: Path) -> None:
    base = _copy(tmp_path, "tencent-analyse", "a")
    other = _copy(tmp_path, "tencent-analyse", "b")
    _with_records(other, 600)
    res = _invoke("compare", str(base), str(other))
    assert isinstance(res.exception, UserError) and res.exception.exit_code == 2
    message = str(res.exception)
    assert "different settings" in message and "recordcount 300 vs 600" in message and "--force" in message
    forced = _invoke("compare", str(base), str(other), "--force", "-f", "csv")
    assert forced.exit_code == 0, forced.output
    assert (
        "recordcount 300 vs 600" in forced.stderr
        and not pd.read_csv(pd.io.common.StringIO(forced.stdout)).empty
    )
    same = _invoke("compare", str(base), str(_copy(tmp_path, "tencent-analyse", "c")))
    assert same.exit_code == 0 and "different settings" not in same.output.lower()


# -------------------------------------------------------------------- 2: parse never cuts a number
BIG = ["binding-load", "binding-workloada", "binding-workloadd", "hdr_fileoutput", "stuck", "workload_f"]


@pytest.mark.parametrize("name", ["hdr_both", "histogram_verbose", *BIG])
def test_parse_never_cuts_a_number_at_80_columns(name: str) -> None:
    """Counts and latencies of six and seven digits (``482,666``) are shown whole at 80 columns."""
    out = cli("parse", str(DATA / "ycsb" / f"{name}.stdout"))
    assert_fits(out)  # nothing wider than 80 columns, no "…"
    (doc,) = json.loads(cli("parse", str(DATA / "ycsb" / f"{name}.stdout"), "-f", "json"))
    shown = {n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", out)}
    figures = [
        v
        for section in doc["sections"].values()
        for k, v in section.items()
        if k in ("Operations", "MaxLatency(us)", "95thPercentileLatency(us)") and isinstance(v, float)
    ]
    assert figures
    for value in figures:
        assert f"{value:.0f}" in shown, (value, out)


# --------------------------------------------------------- 3: short-step advice that changes something
def test_short_step_advice_names_a_setting_that_lengthens_the_step() -> None:
    """The README's alibaba-audit example (``--set maxexecutiontime=15``, scaled to 100,000 operations):
    on the embedded server (about 1,000 ops/s) the step lasts its 15 s, no warning; against a server
    assumed at the suite's 100,000 ops/s the operations end it after 1 s, and the advice raises
    operationcount (not the maxexecutiontime=15 already given); what it advises leaves no warning."""
    args = ["render", "alibaba-audit", "--scale", "0.0002", "--set", "threads=4", "--set", "load_threads=4"]
    args += ["--set", "target=0", "--set", "maxexecutiontime=15"]
    res = _invoke(*args)
    assert res.exit_code == 0 and "steady-state figures" not in res.stderr, res.stderr
    url = {"MONGODB_URL": "mongodb://127.0.0.1:1/ycsb"}  # render needs no server
    res = _invoke(*args, env=url)
    warning = " ".join(res.stderr.split())  # (folded at 80 columns)
    assert res.exit_code == 0 and "steady-state figures" in warning, res.stderr
    fixes = re.findall(r"--set (\S+)", warning.split("need:", 1)[1])
    assert fixes and fixes[0].startswith("operationcount=") and "maxexecutiontime=15" not in fixes, warning
    fixed = _invoke(*args, *[w for fix in fixes for w in ("--set", fix)], env=url)
    assert fixed.exit_code == 0 and "steady-state figures" not in fixed.stderr, fixed.stderr


# --------------------------------------------------------------- 4: render refuses what bench refuses
def test_render_and_dry_run_share_the_preflight_and_its_exit_code() -> None:
    args = ["tencent-threads", "--set", "threads=100"]
    render, dry = _invoke("render", *args), _invoke("bench", *args, "--dry-run")
    for res in (render, dry):
        assert isinstance(res.exception, UserError) and res.exception.exit_code == 2, res.output
        assert "unacknowledged writes" in str(res.exception)
    assert str(render.exception) == str(dry.exception)
    assert render.stdout.startswith("# suite tencent-threads")  # the plan is still shown
    assert _invoke("render", "quick").exit_code == 0


# ------------------------------------------------------------------- 5: errors name the option typed
@pytest.mark.parametrize(
    ("typed", "says"),
    [("threads=abc", "--set threads=abc: "), ("run.threads=[1,x]", "--set run.threads=[1,x]: ")],
)
def test_a_bad_set_value_is_blamed_on_the_option_typed(typed: str, says: str) -> None:
    res = _invoke("render", "quick", "--set", typed)
    assert isinstance(res.exception, UserError) and res.exception.exit_code == 2
    assert str(res.exception).startswith(says) and "quick.toml" not in str(res.exception)


def test_a_bad_value_in_the_suite_file_still_names_its_line(tmp_path: Path) -> None:
    suite = tmp_path / "mine.toml"
    text = (Path(__file__).parents[2] / "ycsb_runner" / "suites" / "quick.toml").read_text()
    suite.write_text(text.replace("threads = [4]", 'threads = ["abc"]'))
    res = _invoke("render", str(suite))
    assert isinstance(res.exception, UserError) and "suite mine.toml, line" in str(res.exception)


# -------------------------------------------------------------------------- 6: a missing run is named
def test_compare_of_a_missing_run_says_it_is_missing(tmp_path: Path) -> None:
    res = _invoke("compare", str(tmp_path / "does-not-exist"), env={"YCSB_RUNNER_RESULTS": str(tmp_path)})
    assert isinstance(res.exception, UserError)
    assert "does-not-exist" in str(res.exception) and "not both" not in str(res.exception)
    alone = _invoke("compare", str(_copy(tmp_path, "tencent-analyse")))
    assert isinstance(alone.exception, UserError) and "not both" not in str(alone.exception)
    assert "--reference" in str(alone.exception)


# --------------------------------------------------------------------- 7: regress of a mistyped suite
def test_regress_of_a_mistyped_suite_says_did_you_mean(tmp_path: Path) -> None:
    history = tmp_path / "history.sqlite"
    history.write_bytes((DATA / "history" / "throttled-nights.sqlite").read_bytes())
    args = ["--results", str(tmp_path), "--history-url", str(history)]
    res = _invoke("regress", "quik", *args)
    assert isinstance(res.exception, UserError) and res.exception.exit_code == 2
    message = str(res.exception)
    assert "did you mean 'quick'?" in message and "None" not in message
    accept = _invoke("regress", "accept", "quik", "--why", "x", *args)
    assert isinstance(accept.exception, UserError) and accept.exception.exit_code == 2
    assert "did you mean 'quick'?" in str(accept.exception)


# ----------------------------------------------------------------- 8: ratios keep significant digits
def test_one_number_formatter_keeps_significant_digits() -> None:
    assert cell_text(16.69 / 4875) == "0.0034"  # a ratio, not "0.00"
    assert cell_text(0.5) == "0.50" and cell_text(-0.012) == "-0.012"
    assert (
        cell_text(1234.5) == "1,234" and cell_text(17.456) == "17.46" and cell_text(2_000_000) == "2,000,000"
    )
    assert cell_text(0.0911, fine=True) == "0.0911" and cell_text(0.05, fine=True) == "0.05"
    assert cell_text(float("nan")) == "-" and cell_text(None) == "-" and cell_text(True) == "True"


def test_ratios_keep_significant_digits_in_the_terminal_and_the_report(tencent_reported: Path) -> None:
    run = tencent_reported  # (its report written by ``ycsb-runner report``)
    args = ["compare", str(run), "--reference", "tencent-mongodb44", "--size", "2C4G"]
    res = _invoke(*args)
    assert res.exit_code == 0, res.output
    rows = json.loads(_invoke(*args, "-f", "json").stdout)["rows"]
    small = [r["ratio"] for r in rows if r.get("ratio") is not None and 0 < r["ratio"] < 0.1]
    assert any(v < 0.01 for v in small), "the tiny run is far below the published figures"
    page = (run / "report.html").read_text()
    for value in small:  # 0.0091, not 0.01; 0.019, not 0.02
        text = cell_text(value)
        assert len(text.lstrip("0.")) == 2 and text in res.stdout and f"<td>{text}</td>" in page, text


# ------------------------------------------------------------------- 9: the settings the run ran with
def test_report_describes_the_run_as_run_not_the_suite_as_written(tmp_path: Path) -> None:
    run = _copy(tmp_path, "tencent-analyse")
    _with_records(run, 600)
    meta = dict(metadata(RunResult.load(run)))
    assert "load 600 records" in meta["settings (as run)"]
    assert "400 operations" in meta["settings (as run)"] and "2 repetitions" in meta["settings (as run)"]
    (described,) = [k for k in meta if k.startswith("suite file's description")]
    assert "not this run" in described
    res = _invoke("report", str(run))
    assert res.exit_code == 0, res.output
    page = (run / "report.html").read_text()
    assert "load 600 records" in page and "workloads/workloada..c" not in page


def test_too_few_intervals_is_cannot_tell_not_stationary() -> None:
    flat = [100.0, 101, 99, 100, 102]
    few = stationarity(np.arange(5) + 0.5, np.array(flat))
    assert few.stationary and few.figures()["stationary"] is None  # nothing found, too few to tell
    many = stationarity(np.arange(20) + 0.5, np.array(flat * 4))
    assert many.figures()["stationary"] is True
    stalled = stationarity(np.arange(6) + 0.5, np.array([100.0, 100, 1, 1, 1, 100]))
    assert stalled.figures()["stationary"] is False  # a stall is found even in a short window


def test_the_steps_table_says_cannot_tell(tmp_path: Path) -> None:
    """steps.csv's ``stationary``: true, false, empty (too few intervals); a folder written before it was
    left empty says true beside its "too few" warning: the report shows yes, no, cannot tell."""
    run = _copy(tmp_path, "tencent-analyse")
    steps = pd.read_csv(run / "steps.csv")
    runs = steps.index[steps["phase"] == "run"]
    few = "only 4 intervals after the warm-up: too few to judge stationarity (a longer run ...)"
    steps["stationary"] = pd.Series([None] * len(steps), dtype=object)
    steps.loc[runs, "stationary"] = [True, False, None, True]
    steps["warnings"] = steps["warnings"].astype(object)
    steps.loc[runs[3], "warnings"] = few  # an older folder: true with the warning
    steps.to_csv(run / "steps.csv", index=False)
    shown = steps_frame(RunResult.load(run)).set_index("step")
    assert shown.loc[steps.loc[runs, "step"], "stationary"].tolist() == [
        "yes",
        "no",
        "cannot tell",
        "cannot tell",
    ]
    assert shown.loc[steps.loc[steps["phase"] == "load", "step"], "stationary"].isna().all()
    assert _invoke("report", str(run)).exit_code == 0
    page = (run / "report.html").read_text()
    assert "cannot tell" in page and ">True<" not in page


# ------------------------------------------------- 10 and 11: what a report's reader sees of its tables
def _headers(page: str) -> list[str]:
    return [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", page, re.S)]


def test_report_headers_are_words_and_the_figure_comes_before_the_rows(
    tencent_reported: Path, audit_reported: Path
) -> None:
    for name, run in (("tencent-analyse", tencent_reported), ("audit-analyse", audit_reported)):
        page = (run / "report.html").read_text()  # (written by ``ycsb-runner report``)
        raw = [h for h in _headers(page) if "_" in h]
        assert not raw, (name, raw)  # published_threads, measured_n, throughput_ops_s, warmup_end_s ...
        md = (run / "report.md").read_text().splitlines()
        heads = [md[i - 1] for i, ln in enumerate(md) if ln.startswith("| ---") or ln.startswith("|---")]
        assert heads and not [h for h in heads if "_" in h.replace("\\_", "")], (name, heads)
    page = (tencent_reported / "report.html").read_text()
    first_figure, rows = page.index("<img"), page.index("<h2>Measured vs published")
    assert first_figure < rows  # the figure first, its 18 rows after the plots
    # which published set each bar compares with: both of the study's, each bar named
    assert "Measured / the published cloud and physical figures (each bar names its set)" in page
    assert "threads (published)" in _headers(page) and "measured / published" in _headers(page)


def test_regress_report_fits_and_its_latency_axis_has_a_unit_that_reads(tmp_path: Path) -> None:
    from ycsb_runner.report.regress_report import TABLE_COLUMNS, axis_scale

    assert axis_scale("avg_us", np.array([850_000.0, 900_000.0])) == ("average latency (ms)", 1e3)
    assert axis_scale("p99_us", np.array([800.0, np.nan])) == ("p99 latency (µs)", 1.0)
    assert axis_scale("throughput_ops_s", np.array([900_000.0]))[1] == 1.0
    assert len(TABLE_COLUMNS) <= 10
    history = tmp_path / "history.sqlite"
    history.write_bytes((DATA / "history" / "throttled-nights.sqlite").read_bytes())
    from ycsb_runner.runs.history import SqliteHistory

    night_10 = SqliteHistory(history).runs().set_index("run_id").loc["night-10", "ended_at"]
    args = ["--results", str(tmp_path), "--history-url", str(history), "--until", str(night_10)]
    res = _invoke("regress", "quick", *args, "--report", str(tmp_path / "rep"))
    assert res.exit_code == 1, res.output  # the throttled nights regressed
    page = (tmp_path / "rep" / "regress.html").read_text()
    headers = _headers(page)
    assert "series" in headers and "change %" in headers and not [h for h in headers if "_" in h]


# ------------------------------------------------------------------------------------ shell completion
def _complete(words: str, env: dict[str, str] | None = None) -> list[str]:
    """What bash completion offers for the command line *words* (the last word being typed), as the script
    `ycsb-runner --install-completion` installs asks for it (Typer's ``_YCSB_RUNNER_COMPLETE``)."""
    import os
    import subprocess
    import sys

    script = Path(sys.executable).parent / "ycsb-runner"
    parts = words.split(" ")
    done = subprocess.run(
        [str(script)],
        env={
            **os.environ,
            **(env or {}),
            "_YCSB_RUNNER_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(parts) - 1),
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_shell_completion_of_suites_run_ids_and_set_keys(tmp_path: Path) -> None:
    assert "quick" in _complete("ycsb-runner bench qu")
    assert set(_complete("ycsb-runner render tencent-")) == {"tencent-mongodb44", "tencent-threads"}
    assert "quick" in _complete("ycsb-runner regress qu")
    assert "maxexecutiontime=" in _complete("ycsb-runner bench quick --set maxexec")
    results = tmp_path / "results"
    _copy(results, "tencent-analyse")
    _copy(results, "audit-analyse")
    env = {"YCSB_RUNNER_RESULTS": str(results)}
    assert _complete("ycsb-runner report tenc", env) == ["tencent-analyse"]
    assert _complete("ycsb-runner compare tencent-analyse au", env) == ["audit-analyse"]

"""What a first-time user saw (issue 22): honest audit labels, units in every compare cell checked against
the seed documents, threads matched by value, run ids wherever a run is named, a single-run side by side.
On the checked-in result folders of real runs (tests/data/runs/)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest
from test_reference import _seed_004_rows, seed_text
from typer.testing import CliRunner

from ycsb_runner.analyse.analysis import RunAnalysis
from ycsb_runner.cli import app
from ycsb_runner.errors import UserError
from ycsb_runner.reference import mix_key, normalise_size
from ycsb_runner.runs.metrics import METRICS

RUNS = Path(__file__).parents[1] / "data" / "runs"


def _copy(tmp_path: Path, name: str, as_name: str | None = None) -> Path:
    return Path(shutil.copytree(RUNS / name, tmp_path / (as_name or name)))


def _invoke(*args: str, env: dict | None = None):
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80", **(env or {})})


# ------------------------------------------------------------------------------- 1: unverified audit
def test_a_state_file_audit_says_it_is_unverified_everywhere(audit_reported: Path) -> None:
    run = audit_reported  # audit switched by the `command` strategy (a state file); its report written
    table = RunAnalysis.of(run).table
    assert "UNVERIFIED audit" in table.title and "command" in table.audit_unverified
    res = _invoke("table", str(run))
    assert res.exit_code == 0 and "UNVERIFIED AUDIT" in res.stdout
    res = _invoke("compare", str(run), "--reference", "alibaba-audit", "-f", "json")
    assert "UNVERIFIED AUDIT" in json.loads(res.stdout)["audit_unverified"]
    res = _invoke("compare", str(run), "--reference", "alibaba-audit")
    assert res.stdout.splitlines()[0].rstrip().endswith("[UNVERIFIED AUDIT]")
    html = (run / "report.html").read_text()  # (by ``ycsb-runner report``: exit 0)
    assert "id='unverified-audit'" in html
    assert html.index("UNVERIFIED AUDIT") < html.index("<h2>")  # above everything measured
    assert "> **UNVERIFIED AUDIT" in (run / "report.md").read_text()


def test_the_manifest_records_the_caveat_and_verified_strategies_carry_none(tmp_path: Path) -> None:
    from ycsb_runner.analyse.caveats import audit_caveat
    from ycsb_runner.audit import unverified_audit
    from ycsb_runner.runs.model import RunResult

    assert unverified_audit("command") and unverified_audit("restart")
    assert unverified_audit("mongodb-runtime") == unverified_audit("aliyun") == unverified_audit(None) == ""
    run = _copy(tmp_path, "audit-analyse")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["audit_strategy"], manifest["audit_unverified"] = "mongodb-runtime", None
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert audit_caveat(RunResult.load(run).manifest) == ""
    assert "UNVERIFIED" not in RunAnalysis.of(run).table.title
    manifest["audit_strategy"], manifest["audit_unverified"] = "command", unverified_audit("command")
    (run / "manifest.json").write_text(json.dumps(manifest))
    again = RunResult.load(run).manifest
    assert again.audit_unverified == unverified_audit("command") == again.to_json()["audit_unverified"]


# ------------------------------------------------------------------- 2: units checked against seed 000
_SEED_000_FIGURE = {"writes_avg_rt": "server_writes_avg_rt_us", "reads_avg_rt": "server_reads_avg_rt_us"}
_SEED_000_OPS = {
    "query": "server_query_per_s",
    "insert": "server_insert_per_s",
    "update": "server_update_per_s",
}


def _seed_000_cells() -> dict[tuple[str, str], tuple[float, str, str]]:
    """(mix, metric) -> (published change, its unit, the other unit's figure) read off seed 000's table."""
    out: dict[tuple[str, str], tuple[float, str, str]] = {}
    for line in seed_text("000").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        share = re.search(r"（(\d+):(\d+):(\d+)）", cells[0]) if len(cells) == 4 else None
        if share is None:
            continue
        insert, read, update = (int(x) / 100 for x in share.groups())
        mix = mix_key(insert=insert, read=read, update=update)
        cpu, rt, opc = cells[1:]
        pp = re.search(r"上涨 (\d+) 个百分点（\+(\d+)%）", cpu)
        out[(mix, "server_cpu_pct")] = (
            (float(pp[1]), "pp", f"+{pp[2]} % of the off value") if pp else (0, "pp", "")
        )
        for name, us, pct in re.findall(r"(\w+_avg_rt) \+(\d+) μs（\+(\d+)%）", rt):
            out[(mix, _SEED_000_FIGURE[name])] = (float(pct), "%", f"+{us} µs")
        for name, ops, pct in re.findall(r"(query|insert|update) 降低 ([\d,]+)（(-\d+)%）", opc):
            out[(mix, _SEED_000_OPS[name])] = (float(pct), "%", f"-{int(ops.replace(',', '')):,} ops/s")
        for metric in ("server_writes_avg_rt_us", "server_reads_avg_rt_us", *_SEED_000_OPS.values()):
            if rt == opc == "无明显变化" or (metric.endswith("rt_us") and rt == "无明显变化"):
                out.setdefault((mix, metric), (0.0, "%", ""))
            if metric.endswith("_per_s") and opc == "无明显变化":
                out.setdefault((mix, metric), (0.0, "%", ""))
    return out


def test_every_alibaba_compare_cell_has_the_seeds_number_and_unit(tmp_path: Path) -> None:
    seed = _seed_000_cells()
    assert len({mix for mix, _ in seed}) == 6
    cmp = RunAnalysis.of(_copy(tmp_path, "audit-analyse")).reference("alibaba-audit").frame
    assert len(cmp) and set(cmp["unit"]) == {"%", "pp"}
    for row in cmp.itertuples():
        published, unit, other = seed[(row.mix, row.metric)]
        assert (row.published, row.unit, row.published_other) == (published, unit, other), row
    # the terminal shows the unit in the cell, under the figure's own name (no µs or ops/s on a % change)
    res = _invoke("compare", str(tmp_path / "audit-analyse"), "--reference", "alibaba-audit")
    reads = [ln for ln in res.stdout.splitlines() if ln.startswith(" read50_update50") and "reads avg" in ln]
    assert reads and "+200.0 %" in reads[0] and "+150 µs" in reads[0]
    assert "(µs)" not in res.stdout and "(ops/s)" not in res.stdout


def test_every_tencent_threads_cell_has_the_seeds_number_and_unit(tmp_path: Path) -> None:
    run = _threads_run(tmp_path, {1: 100, 2: 200})
    seed = {
        (normalise_size(r["cells"][0]), int(r["cells"][1]), r["ratio"]): r["cells"] for r in _seed_004_rows()
    }
    for size in ("2C4G", "48C512G"):
        cmp = RunAnalysis.of(run).reference("tencent-threads", size=size).frame
        for row in cmp.itertuples():
            read = int(row.mix.split("_")[0].removeprefix("read"))
            cells = seed[(size, row.published_threads, f"{read}:{100 - read}")]
            index = {"throughput_ops_s": 2, "read_avg_us": 3, "write_avg_us": 4}.get(row.metric)
            if index is not None:
                assert row.published == float(cells[index].replace(",", "")), row
            assert row.unit == METRICS[row.metric].unit


# -------------------------------------------------------------------------- 3: threads by value
def _threads_run(tmp_path: Path, threads: dict[int, int]) -> Path:
    """The Tencent run as a tencent-threads run whose repetition r ran ``threads[r]`` threads."""
    run = _copy(tmp_path, "tencent-analyse", f"threads-{'-'.join(map(str, threads.values()))}")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["suite"]["study"] = "tencent-threads"
    manifest["suite"]["threads"] = sorted(set(threads.values()))
    (run / "manifest.json").write_text(json.dumps(manifest))
    steps = pd.read_csv(run / "steps.csv")
    is_run = steps["phase"] == "run"
    steps.loc[is_run, "threads"] = steps.loc[is_run, "repetition"].map(threads)
    steps.to_csv(run / "steps.csv", index=False)
    return run


def test_threads_are_matched_by_value_never_by_position(tmp_path: Path) -> None:
    scaled = _threads_run(tmp_path, {1: 8, 2: 16})
    with pytest.raises(UserError, match=r"ran 8, 16 threads; tencent-threads publishes 100, 200 threads"):
        RunAnalysis.of(scaled).reference("tencent-threads", size="2C4G")
    res = _invoke("compare", str(scaled), "--reference", "tencent-threads", "--size", "2C4G")
    assert res.exit_code == 1 and "--set threads=[100,200]" in str(res.exception)
    half = _threads_run(tmp_path, {1: 100, 2: 8})
    cmp = RunAnalysis.of(half).reference("tencent-threads", size="2C4G").frame
    at_100 = cmp[cmp["published_threads"] == 100]
    assert (at_100["threads"] == 100).all() and at_100["measured"].notna().any()
    at_200 = cmp[(cmp["published_threads"] == 200) & (cmp["mix"] == "read50_update50")]
    assert at_200["measured"].isna().all()
    assert set(at_200["note"]) == {"not run at 200 threads (this run: 8, 100)"}
    # at 80 columns the thread count stays beside the mix
    res = _invoke("compare", str(half), "--reference", "tencent-threads", "--size", "2C4G")
    headers = [ln.split() for ln in res.stdout.splitlines() if ln.split()[:1] == ["mix"]]
    assert len(headers) == 2  # the answer (measured / published per mix) and the detail
    assert all(header[:2] == ["mix", "threads"] for header in headers)


# --------------------------------------------------------------- 9: run ids and the side by side
def test_run_ids_are_accepted_wherever_a_run_is_named(tmp_path: Path) -> None:
    results = tmp_path / "results"
    base = _copy(results, "tencent-analyse")
    other = _copy(results, "tencent-analyse", "tencent-analyse-2")
    env = {"YCSB_RUNNER_RESULTS": str(results)}
    assert _invoke("table", "tencent-analyse", env=env).exit_code == 0
    by_id = _invoke("compare", "tencent-analyse", "tencent-analyse-2", "-f", "csv", env=env)
    by_path = _invoke("compare", str(base), str(other), "-f", "csv", env=env)
    by_option = _invoke(
        "compare", "--baseline", "tencent-analyse", "--contender", "tencent-analyse-2", "-f", "csv", env=env
    )
    assert by_id.exit_code == 0 and by_id.stdout == by_path.stdout == by_option.stdout
    assert _invoke("report", "tencent-analyse", env=env).exit_code == 0 and (base / "report.html").exists()
    missing = _invoke("table", "no-such-run", env=env)
    assert isinstance(missing.exception, UserError) and "`ycsb-runner runs` lists the run ids" in str(
        missing.exception
    )


def test_two_single_runs_are_shown_side_by_side(tmp_path: Path) -> None:
    base = _copy(tmp_path, "tencent-analyse", "a")
    other = _copy(tmp_path, "tencent-analyse", "b")
    for run in (base, other):  # keep repetition 1 only: one run per side
        steps = pd.read_csv(run / "steps.csv")
        steps[(steps["repetition"] <= 1)].to_csv(run / "steps.csv", index=False)
    res = _invoke("compare", str(base), str(other), "-f", "csv")
    df = pd.read_csv(pd.io.common.StringIO(res.stdout))
    assert res.exit_code == 0 and (df["n_baseline"] == 1).all() and (df["significant"] == "n too small").all()
    res = _invoke("compare", str(base), str(other))
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    title = " ".join(line.strip() for line in lines[:2])
    assert "side by side (one run each: differences shown, no significance claimed)" in title
    assert "n too small" not in res.stdout and "change %" in res.stdout
    assert " p " not in next(ln for ln in lines if " mix " in ln)


# --------------------------------------------------------------------- 6: a failed run's report
def test_a_failed_runs_report_says_so_and_names_the_mix_that_failed(
    tmp_path: Path, tencent_reported: Path
) -> None:
    from ycsb_runner.report.run_report import write_report

    run = _copy(tmp_path, "tencent-analyse", "failed")
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["status"], manifest["error"] = "failed", "step 05-run-read100-t2-r1 failed: error rate 5%"
    (run / "manifest.json").write_text(json.dumps(manifest))
    steps = pd.read_csv(run / "steps.csv")
    steps.loc[steps["mix"] == "read100", "verdict"] = "failed"  # the status, as format 2 names it
    steps.to_csv(run / "steps.csv", index=False)
    html = write_report(run)[0].read_text()
    banner = html[html.index("id='run-failed'") :]
    assert html.index("id='run-failed'") < html.index("<h2>")
    assert banner.startswith("id='run-failed'><strong>This run FAILED: step 05-run-read100-t2-r1 failed")
    assert "Not completed:" in banner.split("</div>")[0] and "(failed)" in banner.split("</div>")[0]
    cmp = RunAnalysis.of(run).reference("tencent-mongodb44").frame
    assert set(cmp[cmp["mix"] == "read100"]["note"]) == {"mix ran and failed: no completed step"}
    assert set(cmp[cmp["mix"] == "insert100"]["note"]) == {"mix not in this run"}
    completed = (tencent_reported / "report.html").read_text()  # (the completed run's report)
    assert "run-failed" not in completed


# ------------------------------------------------------------------ 8: `runs` at 80 columns
def test_runs_at_80_columns_keeps_whole_run_ids_and_the_tags(tmp_path: Path) -> None:
    results = tmp_path / "results"
    for name, new in (("tencent-analyse", "20261201-020000-tencent-analyse-tiny"), ("audit-analyse", None)):
        run = _copy(results, name, new)
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["run_id"], manifest["tags"] = run.name, {"server": "7.0.12", "sha": "abc123"}
        (run / "manifest.json").write_text(json.dumps(manifest))
    env = {"YCSB_RUNNER_RESULTS": str(results)}
    assert _invoke("history", "rebuild", "--results", str(results), env=env).exit_code == 0
    res = _invoke("runs", "--results", str(results), env=env)
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert all(len(line.rstrip()) <= 80 for line in lines)
    assert any(line.lstrip().startswith("20261201-020000-tencent-analyse-tiny ") for line in lines)
    assert any(line.lstrip().startswith("audit-analyse ") for line in lines)
    assert "server=7.0.12,sha=abc123" in res.stdout.replace("\n", "") and "completed" in res.stdout
    # the id printed is the id `table` takes
    assert _invoke("table", "20261201-020000-tencent-analyse-tiny", env=env).exit_code == 0


# -------------------------------------------------------------- 10: reports that hold at 800 px
def _images(html: str) -> list[tuple[int, int]]:
    """(width, height) in px of every inline PNG."""
    import base64
    import struct

    sizes = []
    for b64 in re.findall(r'src="data:image/png;base64,([^"]+)"', html):
        head = base64.b64decode(b64[:64])
        sizes.append(struct.unpack(">II", head[16:24]))
    return sizes


def test_report_panels_reflow_and_tables_scroll(tencent_reported: Path, audit_reported: Path) -> None:
    for run in (tencent_reported, audit_reported):
        html = (run / "report.html").read_text()
        # every image is one panel no wider than an 800 px window, shown at its own size or smaller; the
        # answer (the first image: one figure of every mix) within the 800 px window's page
        sizes = _images(html)
        assert sizes[0][0] <= 760 and all(w <= 560 for w, _ in sizes[1:]), sizes
        assert "display:flex;flex-wrap:wrap" in html and "img{max-width:100%;height:auto" in html
        # every table is in a scrolling box, none cut
        assert html.count("<table") - 1 == html.count("<div class='scroll'><table")  # the Run table aside
        assert "a_mean" not in html and ">server_cpu_pct<" not in html  # names a user reads
    audit = (audit_reported / "report.html").read_text()
    # the answer (the change per mix) before the detail in the study's layout
    assert audit.index("on vs off: the change per mix") < audit.index("Audit overhead per mix (on vs off")


def test_captions_say_what_the_line_styles_mean(tmp_path: Path) -> None:
    from ycsb_runner.report import plots
    from ycsb_runner.runs.model import RunResult

    tencent = RunResult.load(_copy(tmp_path, "tencent-analyse"))
    panels, _, styles = plots.plot_spectrum(tencent)
    assert len(panels) == 2 and styles == ""  # one thread count, no audit arms: nothing to tell apart
    audit = RunResult.load(_copy(tmp_path, "audit-analyse"))
    assert plots.plot_spectrum(audit)[2] == "audit off solid, on dashed"
    threads = RunResult.load(_threads_run(tmp_path, {1: 100, 2: 200}))
    assert plots.plot_spectrum(threads)[2] == "100 threads solid, 200 threads dashed"


def test_one_latency_unit_per_figure(tmp_path: Path) -> None:
    from ycsb_runner.report import plots
    from ycsb_runner.runs.model import RunResult

    run_dir = _copy(tmp_path, "tencent-analyse")
    ts = pd.read_csv(run_dir / "timeseries.csv")
    run_steps = sorted(s for s in ts["step"].unique() if "-run-" in s)
    # one step 1000x slower: without one unit per figure its panel would switch to s, the others ms
    slow = (ts["step"] == run_steps[0]) & ts["avg_us"].notna()
    for col in ("avg_us", "p90_us", "p99_us"):
        ts.loc[slow, col] = ts.loc[slow, col] * 1000
    ts.to_csv(run_dir / "timeseries.csv", index=False)
    run = RunResult.load(run_dir)
    units = set()
    original = plots.latency_unit

    def spy(max_us: float) -> tuple[str, float]:
        units.add(original(max_us))
        return original(max_us)

    plots.latency_unit = spy
    try:
        panels, _ = plots.plot_step_timeseries(run, "run")
    finally:
        plots.latency_unit = original
    assert len(panels) == len(run_steps) and len(units) == 1


# ------------------------------------------------------------------------------ 11: small things
def test_one_latency_unit_name_and_readable_reference_headers(tmp_path: Path) -> None:
    for name in ("tencent-analyse", "audit-analyse"):
        res = _invoke("table", str(_copy(tmp_path, name)), "--wide")
        assert "(us)" not in res.stdout
    res = _invoke("reference", "show", "tencent-threads", "--size", "2C4G", env={"COLUMNS": "120"})
    assert "throughput (ops/s)" in res.stdout and "RAL (µs)" in res.stdout and "ops s" not in res.stdout


def test_generic_table_has_every_operations_average_and_results_one_throughput(tmp_path: Path) -> None:
    from ycsb_runner.analyse.results import results_table, results_text
    from ycsb_runner.analyse.table import generic_table, step_metrics
    from ycsb_runner.runs.model import RunResult

    run_dir = _copy(tmp_path, "tencent-analyse")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["suite"]["study"] = None  # a suite of its own: the generic table
    (run_dir / "manifest.json").write_text(json.dumps(manifest))
    run = RunResult.load(run_dir)
    table = generic_table(run, step_metrics(run)).frame.set_index("mix")
    assert {"READ avg (µs)", "UPDATE avg (µs)"} <= set(table.columns)
    ops = pd.read_csv(run_dir / "operations.csv")
    reads = ops[(ops["operation"] == "READ") & (ops["phase"] == "run") & (ops["mix"] == "read100")]
    assert table.loc["read100", "READ avg (µs)"] == pytest.approx(reads["average_latency_us"].mean())
    text, _ = results_text(results_table(run))
    for _, rows in text.groupby("#", sort=False):
        assert rows["ops/s"].iloc[0] != "" and (rows["ops/s"].iloc[1:] == "").all()


def test_compare_judges_at_the_level_regress_uses() -> None:
    import inspect

    from ycsb_runner.analyse.compare import compare_table, regression_gate
    from ycsb_runner.cli.analyse import compare_cmd
    from ycsb_runner.cli.history import regress_cmd

    level = inspect.signature(regress_cmd).parameters["alpha"].default
    assert level == 0.01
    assert inspect.signature(compare_cmd).parameters["alpha"].default == level
    assert inspect.signature(compare_table).parameters["alpha"].default == level
    assert inspect.signature(regression_gate).parameters["alpha"].default == level

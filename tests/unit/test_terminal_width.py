"""Terminal output at 80 columns: every table fits, no number is cut, nothing is an empty box.

The CLI runs in-process (Typer's ``CliRunner``: stdout captured, not a terminal, as in a log or ``| less``)
with ``COLUMNS=80``, on the checked-in real run folders and the shipped reference tables;
``test_piped_output_follows_columns`` runs it in a real subprocess with stdout piped, where rich reads
``COLUMNS`` itself."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
from cli_process import run_module
from rich.cells import cell_len
from typer.testing import CliRunner

from ycsb_runner.analyse.results import print_results, results_table
from ycsb_runner.cli import app
from ycsb_runner.present import console
from ycsb_runner.present.termtable import column_needs, is_number_text
from ycsb_runner.reference import load_reference

RUNS = Path(__file__).parents[1] / "data" / "runs"
REFERENCES = ("alibaba-audit", "tencent-mongodb44", "tencent-threads")


def cli(*args: str, columns: int = 80) -> str:
    """The CLI in-process with COLUMNS set (Typer's help reads it per call). The table console was built
    at import, when rich read COLUMNS into its width, so it gets that width here for the call; the
    subprocess test below checks rich's own reading of COLUMNS."""
    out = console.out_console
    saved = out._width, out._color_system
    out.width = columns
    out._color_system = None  # as rich decides for a pipe (also under ``pytest -s`` in a terminal)
    try:
        res = CliRunner().invoke(
            app, list(args), env={"COLUMNS": str(columns)}, prog_name="python -m ycsb_runner"
        )
    finally:
        out._width, out._color_system = saved
    assert res.exit_code == 0, (res.stderr, res.exception)
    return res.stdout


def piped_cli(*args: str, columns: int = 80) -> str:
    """The CLI as a subprocess, stdout piped, ``COLUMNS`` in its environment."""
    env = {**os.environ, "COLUMNS": str(columns)}
    done = run_module(*args, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def assert_fits(out: str, columns: int = 80) -> None:
    lines = out.splitlines()
    assert lines, "no output"
    too_wide = [line for line in lines if cell_len(line.rstrip()) > columns]
    assert not too_wide, too_wide[:3]
    assert "…" not in out
    assert not re.search(r"[┃│]\s*[┃│]\s*[┃│]", out), "empty boxes"


def _numbers(text: str) -> set[str]:
    """The numbers of *text*, thousands separators dropped (``40,454`` -> ``40454``)."""
    return {n.replace(",", "") for n in re.findall(r"\d[\d,]*(?:\.\d+)?", text)}


@pytest.mark.parametrize("name", REFERENCES)
@pytest.mark.parametrize("wide", [False, True])
def test_reference_show_fits_80_columns_and_shows_the_data(name: str, wide: bool) -> None:
    out = cli("reference", "show", name, *(["--wide"] if wide else []))
    assert_fits(out)
    frame = load_reference(name)
    # every mix of the table is there, and (wide) every published throughput / CPU change in full
    for mix in frame["mix"].unique():
        assert mix in out
    column = "throughput_ops_s" if "throughput_ops_s" in frame else "cpu_change_pp"
    values = {f"{int(v)}" for v in frame[column].dropna()}
    assert values <= _numbers(out), values - _numbers(out)
    if wide:
        assert "上涨 3 个百分点" in out or name != "alibaba-audit"
        assert "up 3 percentage points (+15%)" in out or name != "alibaba-audit"


def test_narrow_reference_table_names_what_it_hides() -> None:
    out = cli("reference", "show", "alibaba-audit")
    assert "not shown:" in out and "--wide" in out


@pytest.mark.parametrize("run", ["tencent-analyse", "audit-analyse"])
def test_table_fits_80_columns_with_every_mean(run: str) -> None:
    out = cli("table", str(RUNS / run))
    assert_fits(out)
    csv = pd.read_csv(__import__("io").StringIO(cli("table", str(RUNS / run), "--format", "csv")))
    for mix in csv["mix"]:
        assert mix in out
    if "throughput (ops/sec)" in csv:
        for v in csv["throughput (ops/sec)"]:
            assert f"{v:,.0f}" in out


@pytest.mark.parametrize(
    "args",
    [
        ("tencent-analyse", "--reference", "tencent-mongodb44"),
        ("audit-analyse", "--reference", "alibaba-audit"),
        ("tencent-analyse", str(RUNS / "tencent-analyse")),
    ],
)
def test_compare_fits_80_columns(args: tuple[str, ...]) -> None:
    out = cli("compare", str(RUNS / args[0]), *args[1:])
    assert_compare_fits(out, args)


def assert_compare_fits(out: str, args: tuple[str, ...], columns: int = 80) -> None:
    assert_fits(out, columns)
    full = json.loads(cli("compare", str(RUNS / args[0]), *args[1:], "--format", "json"))
    first = "measured" if "--reference" in args else "baseline"
    shown = _numbers(out)
    for row in full["rows"]:
        v = row[first]
        if v is not None and abs(v) >= 100:
            assert f"{v:.0f}" in shown


def test_compare_reference_states_what_the_run_did() -> None:
    out = cli("compare", str(RUNS / "tencent-analyse"), "--reference", "tencent-mongodb44")
    assert "this run: 300 records, threads 2" in out
    assert "published: 2,000,000 records, threads 8" in out


def test_piped_output_follows_columns() -> None:
    """A real subprocess with stdout piped: rich takes its width from COLUMNS, narrow and wide."""
    args = ("tencent-analyse", "--reference", "tencent-mongodb44")
    narrow = piped_cli("compare", str(RUNS / args[0]), *args[1:], columns=80)
    assert_compare_fits(narrow, args, 80)
    assert narrow == cli("compare", str(RUNS / args[0]), *args[1:])  # in-process sees what a pipe sees
    wide = piped_cli("compare", str(RUNS / args[0]), *args[1:], columns=200)
    assert max(cell_len(line.rstrip()) for line in wide.splitlines()) > 80
    assert_compare_fits(wide, args, 200)
    assert "not shown" not in wide  # at 200 columns everything fits


@pytest.mark.parametrize(
    "command",
    [
        (),
        ("bench",),
        ("compare",),
        ("table",),
        ("report",),
        ("reference", "show"),
        ("render",),
        ("regress",),
        ("regress", "accept"),
        ("findmax",),
    ],
)
def test_help_is_not_cut(command: tuple[str, ...]) -> None:
    out = cli(*command, "--help")
    assert_fits(out)


def test_results_table_of_a_run_fits(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # 80 columns for this test only (it used to stay set, and a later CLI test at COLUMNS=160 got 80)
    monkeypatch.setattr(console.out_console, "_width", 80)
    print_results(RUNS / "tencent-analyse")
    out = capsys.readouterr().out
    assert_fits(out)
    df = results_table(RUNS / "tencent-analyse")
    for v in df["average_latency_us"].dropna():
        assert f"{v:,.0f}" in out
    for step in df["step"].unique():
        assert step in out  # in the legend under the table


def test_column_needs_keeps_numbers_whole() -> None:
    minimum, natural, numeric = column_needs(["106 ± 16.43", "8,464", "not sampled at all here"], "RAL (µs)")
    assert minimum >= len("106 ± 16.43") and natural == len("not sampled at all here") and numeric
    assert is_number_text("12.5%") and is_number_text("-3,000") and not is_number_text("read100")


def test_a_multi_line_caption_keeps_its_lines_and_escapes_control_characters_from_data() -> None:
    """Issue 49: a caption's own line breaks are lines at a real terminal width (80, a terminal console),
    while a line break or an escape sequence inside a line from data stays escaped."""
    import io

    from rich.console import Console

    from ycsb_runner.present.termtable import print_frame

    buf = io.StringIO()
    term = Console(file=buf, width=80, force_terminal=True, color_system=None)
    frame = pd.DataFrame({"step": ["01", "02"], "ops/s": ["1,234", "5,678"]})
    data = "tag from data\x1b[2J\nforged line"
    print_frame(frame, title="t", caption="first line\nsecond line", console=term)
    print_frame(frame, title="t", caption=["legend one", data], console=term)
    out = buf.getvalue()
    assert_fits(out)
    lines = [line.strip() for line in out.splitlines()]
    assert "first line" in lines and "second line" in lines and "legend one" in lines
    assert "\x1b[2J" not in out and "\\x1b[2J" in out and "\\nforged line" in out
    assert "forged line" not in lines  # never a line of its own


def test_bench_ends_with_the_results_table_and_at_most_three_lines(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last screen of a bench: the table (its legend one step a line), then where the results are, the
    steps that need attention and why (the 15-s steps still rising: a moving column), the run id."""
    from ycsb_runner.analyse.results import footer_lines

    monkeypatch.setattr(console.out_console, "_width", 80)
    run = RUNS / "quick-generic"
    print_results(run, footer=True)
    out = capsys.readouterr().out
    assert_fits(out)
    lines = out.rstrip("\n").splitlines()
    footer = footer_lines(__import__("ycsb_runner.runs.model", fromlist=["RunResult"]).RunResult.load(run))
    assert 2 <= len(footer) <= 3 and [line.strip() for line in lines[-len(footer) :]] == footer
    assert footer[-1] == "run id: i49-quick" and "still moving" in footer[1] and "moving" in lines[1]
    assert "%/min" not in out and "\\n" not in out
    legend = [line for line in lines if re.match(r"^\s*0\d  0\d-", line)]
    assert len(legend) == 4  # one line per step: the caption's line breaks kept

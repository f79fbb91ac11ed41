"""Issue 38, hostile and unlucky inputs round three: one test per case of the fault campaign (numbered as in
the issue's table), the step that fails for several reasons, and the property test of output
neutralisation (random hostile text through every output format of ``runs``, ``regress``, ``table``,
``compare``, ``report`` and the regress report, each output parsed back). Case 17 (``server status`` and a
foreign workdir) is tests/unit/test_server_state.py; case 12 against a MongoDB history is
tests/integration/test_history_mongodb_tags.py."""

from __future__ import annotations

import base64
import csv
import io
import json
import os
import re
import sqlite3
import struct
import subprocess
import sys
import warnings
import zlib
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from cli_process import run_main
from markdown_it import MarkdownIt
from test_regress import NOISE, _history, _nightly_folders, _nights
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.errors import UserError

SUITE = "tencent-analyse-tiny"  # the suite of the checked-in run the nights are copied from
DATA = Path(__file__).parents[1] / "data" / "ycsb"
ESC_TAG = "\x1b]0;PWNED\x07\x1b[31mRED"  # retitles the window, then turns the screen red
IMG = "<img src=x onerror=alert(1)>"
WIDE = {**os.environ, "COLUMNS": "400"}  # every column shown: nothing hidden by the fitting


def _tag(folder: Path, **tags: str) -> None:
    m = json.loads((folder / "manifest.json").read_text())
    m["tags"] = {**m["tags"], **tags}
    (folder / "manifest.json").write_text(json.dumps(m))


def _nightly(
    tmp_path: Path,
    factors: list[float],
    tags: dict[int, dict[str, str]] | None = None,
    latencies: bool = True,
) -> Path:
    """One run folder per night (``test_regress._nightly_folders``; *latencies* False: the throughput
    series change alone), night i tagged ``tags[i]`` as a run folder of an older ycsb-runner (or a
    hand-edited manifest) may be, and the history rebuilt."""
    results = tmp_path / "results"
    _nightly_folders(results, factors, latencies)
    for i, extra in (tags or {}).items():
        _tag(results / f"night-{i:02d}", **extra)
    res = CliRunner().invoke(app, ["history", "rebuild", "--results", str(results)])
    assert res.exit_code == 0, res.output
    return results


def _one_line_error(text: str, *needles: str) -> None:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text and all(n in lines[0] for n in needles), text


# --- parsing each output back ------------------------------------------------------------------------------

_MD = MarkdownIt("commonmark").enable("table")


def _markdown(text: str) -> tuple[list[list[int]], list[str]]:
    """Per GFM table, the cell count of each row; and every raw HTML the CommonMark parser found."""
    tables: list[list[int]] = []
    html: list[str] = []
    cells = 0
    for tok in _MD.parse(text):
        if tok.type == "table_open":
            tables.append([])
        elif tok.type == "tr_open":
            cells = 0
        elif tok.type in ("th_open", "td_open"):
            cells += 1
        elif tok.type == "tr_close":
            tables[-1].append(cells)
        elif tok.type == "html_block":
            html.append(tok.content)
        for child in tok.children or []:
            if child.type == "html_inline":
                html.append(child.content)
    return tables, html


class _Html(HTMLParser):
    """Every start tag of a page, and its text (entities resolved)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _html(text: str) -> _Html:
    page = _Html()
    page.feed(text)
    page.close()
    return page


def _csv_rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


# --- case 1: escape sequences in a tag, then `runs` ------------------------------------------------------


def test_1_escape_sequences_in_a_tag_are_shown_escaped_by_runs(tmp_path: Path) -> None:
    results = _nightly(tmp_path, [1.0], {0: {"k": ESC_TAG}})
    proc = run_main("runs", "--results", str(results), env=WIDE)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout
    assert "k=\\x1b]0;PWNED\\x07\\x1b[31mRED" in proc.stdout


# --- case 2: escape sequences in regress accept's --why / --by ----------------------------------------


def test_2_accept_notes_with_escapes_are_refused_and_old_ones_are_shown_escaped(tmp_path: Path) -> None:
    results = _nightly(tmp_path, [*NOISE, 0.6, 0.6])
    accept = ["regress", "accept", SUITE, "--results", str(results)]
    for option in ("--why", "--by"):
        bad = run_main(*accept, "--why", "x", option, "new\x1b]0;PWNED\x07build")
        assert bad.returncode == 2
        _one_line_error(bad.stderr, option, "control character U+001B")
    assert CliRunner().invoke(app, [*accept, "--why", "new build", "--by", "alice"]).exit_code == 0
    # a note an older ycsb-runner recorded: every later reader sees it escaped
    con = sqlite3.connect(results / "history.sqlite")
    con.execute("UPDATE accepts SET why = ?, accepted_by = ?", (f"new {ESC_TAG}", "\x1b[2Jmallory"))
    con.commit()
    con.close()
    later = run_main("regress", SUITE, "--results", str(results), "--all", env=WIDE)
    assert later.returncode == 0, later.stderr
    assert "\x1b" not in later.stdout + later.stderr
    assert "by \\x1b[2Jmallory" in later.stdout and "new \\x1b]0;PWNED\\x07" in later.stdout


# --- case 3: HTML and \r in a tag, then `runs -f markdown` and regress.md -----------------------------


def test_3_html_and_carriage_return_in_a_tag_stay_one_markdown_cell(tmp_path: Path) -> None:
    hostile = f"{IMG}\rx|y`z"
    factors = [*NOISE, 0.6, 0.6]
    results = _nightly(tmp_path, factors, {7: {"build": hostile}}, latencies=False)  # (fewer trend plots)
    runs = run_main("runs", "--results", str(results), "-f", "markdown")
    assert runs.returncode == 0, runs.stderr
    (table,), html = _markdown(runs.stdout)
    assert html == [] and len(table) == 1 + len(factors) and len(set(table)) == 1
    assert "onerror" in runs.stdout  # shown as text, not dropped
    report = tmp_path / "report"
    res = CliRunner().invoke(app, ["regress", SUITE, "--results", str(results), "--report", str(report)])
    assert res.exit_code == 1, res.output
    md = (report / "regress.md").read_text()
    tables, html = _markdown(md)
    assert html == [] and tables and all(len(set(t)) == 1 for t in tables)
    assert "onerror" in md and "\r" not in md
    page = _html((report / "regress.html").read_text())
    assert page.tags.count("img") == md.count("](regress-figures/")  # one per figure, none from the tag
    assert any(IMG in t for t in page.text)  # the tag's text, shown as text


# --- case 4: \r in a tag, then `regress --all -f csv` ----------------------------------------------------


def test_4_carriage_return_in_a_tag_is_quoted_in_csv(tmp_path: Path) -> None:
    results = _nightly(tmp_path, [*NOISE, 0.6, 0.6])
    m = json.loads((results / "night-07" / "manifest.json").read_text())
    m["tags"] = {"build": "a\rb"}  # its only tag (a comma in a joined list would quote the cell anyway)
    (results / "night-07" / "manifest.json").write_text(json.dumps(m))
    assert CliRunner().invoke(app, ["history", "rebuild", "--results", str(results)]).exit_code == 0
    base = ["regress", SUITE, "--results", str(results), "--all"]
    as_csv = CliRunner().invoke(app, [*base, "-f", "csv"])
    as_json = CliRunner().invoke(app, [*base, "-f", "json"])
    assert as_csv.exit_code == as_json.exit_code == 1, as_csv.output
    rows = _csv_rows(as_csv.stdout)
    expected = json.loads(as_json.stdout)["rows"]
    assert len(rows) == 1 + len(expected) and {len(r) for r in rows} == {len(rows[0])}
    assert "build=a\rb" in [r[rows[0].index("change_tags")] for r in rows[1:]]


# --- case 5: mathtext in a tag on the night a regression begins ------------------------------------------


def test_5_dollar_signs_in_a_tag_do_not_break_the_regress_report(tmp_path: Path) -> None:
    results = _nightly(tmp_path, [*NOISE, 0.6, 0.6], {7: {"k": "$\\foo^$"}}, latencies=False)
    report = tmp_path / "report"
    res = CliRunner().invoke(app, ["regress", SUITE, "--results", str(results), "--report", str(report)])
    assert res.exit_code == 1, res.output  # the regression, and the report written
    assert (report / "regress.html").is_file() and list((report / "regress-figures").glob("*.png"))
    assert "$\\foo^$" in (report / "regress.md").read_text().replace("\\\\", "\\").replace("\\^", "^")


def test_regress_report_that_cannot_be_written_exits_3_after_the_judgement(tmp_path: Path) -> None:
    results = _nightly(tmp_path, [*NOISE, 0.6, 0.6], latencies=False)  # (its figures are drawn first)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    proc = run_main("regress", SUITE, "--results", str(results), "--report", str(blocker / "report"))
    assert proc.returncode == 3  # not 1 (a regression) nor 2 (could not decide)
    assert "regression" in proc.stdout  # the judgement is printed
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("error: the report was not written") and "exit 1 without --report" in last
    assert "Traceback" not in proc.stderr and blocker.read_text() == "not a folder\n"


# --- case 6: a 120 KB tag value ---------------------------------------------------------------------------


def test_6_a_huge_tag_is_refused_by_bench_and_cut_by_runs(tmp_path: Path) -> None:
    huge = "v" * 120_000
    proc = run_main("bench", "quick", "--dry-run", "--tag", f"k={huge}", "--results", str(tmp_path / "r"))
    assert proc.returncode == 2
    _one_line_error(proc.stderr, "--tag k", "120,000 characters, at most 256")
    results = _nightly(tmp_path, [1.0], {0: {"k": huge}})  # a folder of an older ycsb-runner
    shown = run_main("runs", "--results", str(results))
    assert shown.returncode == 0, shown.stderr
    assert len(shown.stdout.splitlines()) < 30 and "more characters" in shown.stdout
    full = run_main("runs", "--results", str(results), "-f", "csv")  # a data format keeps it whole
    assert huge in full.stdout


# --- case 7: a tag filter on a key no run has -----------------------------------------------------------


def test_7_a_tag_filter_matches_only_runs_that_have_the_key(tmp_path: Path) -> None:
    results = _nightly(tmp_path, [1.0, 1.0], {1: {"nosuchkey": "None"}})
    res = CliRunner().invoke(
        app, ["runs", "--results", str(results), "--tag", "nosuchkey=None", "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    assert [r["run_id"] for r in json.loads(res.stdout)["rows"]] == ["night-01"]
    res = CliRunner().invoke(app, ["runs", "--results", str(results), "--tag", "other=None", "-f", "json"])
    assert json.loads(res.stdout)["rows"] == []


# --- cases 8 and 9: links that lead out of the run folder -------------------------------------------------


def test_8_report_figures_linked_outside_the_run_folder_are_not_written(
    tencent: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tencent / "report-figures").symlink_to(outside, target_is_directory=True)
    proc = run_main("report", str(tencent))
    assert proc.returncode == 2
    _one_line_error(proc.stderr, "report-figures", "leads outside")
    assert list(outside.iterdir()) == [] and not (tencent / "report.html").exists()


def test_9_a_csv_linked_outside_the_run_folder_is_not_read(tencent: Path) -> None:
    (tencent / "operations.csv").unlink()
    (tencent / "operations.csv").symlink_to("/etc/passwd")
    proc = run_main("table", str(tencent))
    assert proc.returncode == 2
    _one_line_error(proc.stderr, "operations.csv", "leads outside")
    assert "root:" not in proc.stdout + proc.stderr


# --- cases 10 and 11: a locked or read-only history -----------------------------------------------------

_HOLD = """
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA locking_mode=EXCLUSIVE")
con.execute("BEGIN EXCLUSIVE")
con.execute("UPDATE runs SET suite = suite")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
con.execute("COMMIT")
"""


def _hold_lock(db: Path, seconds: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(db), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    return proc


def test_10_a_briefly_locked_history_still_answers(tmp_path: Path) -> None:
    results = _nightly(tmp_path, [1.0, 1.0])
    holder = _hold_lock(results / "history.sqlite", 2.0)
    try:
        proc = run_main("runs", "--results", str(results), "-f", "json")
    finally:
        holder.wait(timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert len(json.loads(proc.stdout)["rows"]) == 2


def test_10_a_history_locked_too_long_gets_advice_that_keeps_the_accepts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ycsb_runner.runs import history

    results = _nightly(tmp_path, [*NOISE, 0.6, 0.6])
    accept = ["regress", "accept", SUITE, "--results", str(results), "--why", "w"]
    assert CliRunner().invoke(app, accept).exit_code == 0
    monkeypatch.setattr(history, "BUSY_WAIT_S", 0.5)  # (60 s in use)
    db = results / "history.sqlite"
    holder = _hold_lock(db, 20.0)
    try:
        for read in (history.SqliteHistory(db).runs, lambda: history.SqliteHistory(db).accepts(SUITE)):
            with pytest.raises(UserError) as caught:
                read()
            said = str(caught.value)
            assert "\n" not in said and "locked by another process" in said and "run this again" in said
            assert "do not move it away" in said and "move it away and run" not in said
    finally:
        holder.kill()
        holder.wait()
    accepts = history.SqliteHistory(db).accepts(SUITE)
    assert len(accepts) > 0 and set(accepts["why"]) == {"w"}


def test_10_a_damaged_history_is_copied_aside_before_a_rebuild(tmp_path: Path) -> None:
    from ycsb_runner.runs.history import SqliteHistory

    db = tmp_path / "history.sqlite"
    db.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 64)
    with pytest.raises(UserError) as caught:
        SqliteHistory(db).runs()
    said = str(caught.value)
    assert "\n" not in said and said.index("Copy it aside first") < said.index("history rebuild")


def _read_only_mount(folder: Path, *command: str) -> subprocess.CompletedProcess[str]:
    """*command* (``ycsb-runner`` arguments) with *folder* bind-mounted read-only in a mount namespace of its
    own (root and ``unshare`` needed: the mount never shows outside the command)."""
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
    return subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            script,
            "sh",
            str(folder),
            sys.executable,
            "-m",
            "ycsb_runner",
            *command,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_11_a_wal_history_on_a_read_only_mount_is_read(tmp_path: Path) -> None:
    results = _nightly(tmp_path, [*NOISE, 0.6, 0.6])
    db = results / "history.sqlite"
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for side in (Path(f"{db}-wal"), Path(f"{db}-shm")):  # (an empty WAL: as a history copied elsewhere)
        side.unlink(missing_ok=True)
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True, check=False)
    if os.geteuid() != 0 or probe.returncode != 0:
        pytest.skip("needs root and unshare -m to bind-mount a folder read-only")
    before = db.read_bytes()
    runs = _read_only_mount(results, "runs", "--results", str(results), "-f", "json")
    assert runs.returncode == 0, runs.stderr
    assert len(json.loads(runs.stdout)["rows"]) == 9
    judged = _read_only_mount(results, "regress", SUITE, "--results", str(results), "-f", "json")
    assert judged.returncode == 1, judged.stderr  # the regression of the last two nights
    assert json.loads(judged.stdout)["exit_code"] == 1
    writes = _read_only_mount(results, "regress", "accept", SUITE, "--results", str(results), "--why", "w")
    assert writes.returncode == 2
    assert "read-only" in writes.stderr and "move it away" not in writes.stderr
    assert db.read_bytes() == before


# --- case 12: a tag key a MongoDB history cannot store ---------------------------------------------------


@pytest.mark.parametrize("key", ["$where", "a.b"])
def test_12_tag_keys_a_mongodb_history_cannot_store_are_refused(key: str, tmp_path: Path) -> None:
    proc = run_main("bench", "quick", "--dry-run", "--tag", f"{key}=1", "--results", str(tmp_path / "r"))
    assert proc.returncode == 2
    _one_line_error(proc.stderr, key, "cannot start with '$' or hold '.'")


def test_12_an_old_folder_with_such_a_key_is_stored_as_key_value_documents() -> None:
    from ycsb_runner.runs.history import MongoHistory, RunRecord

    record = RunRecord(run={"run_id": "r1", "tags": {"$where": "1", "a.b": "2", "ok": "3"}}, metrics=[])
    doc = MongoHistory._doc(record)
    assert doc["tags"] == [{"k": "$where", "v": "1"}, {"k": "a.b", "v": "2"}, {"k": "ok", "v": "3"}]
    assert MongoHistory._doc(RunRecord(run={"run_id": "r2", "tags": {"ok": "3"}}, metrics=[]))["tags"] == {
        "ok": "3"
    }


# --- case 13: a suite nested 1,000 deep -----------------------------------------------------------------


def test_13_a_deeply_nested_suite_is_one_line_error(tmp_path: Path) -> None:
    suite = tmp_path / "deep.toml"
    suite.write_text('name = "deep"\nx = ' + "[" * 1000 + "]" * 1000 + "\n")
    proc = run_main("render", str(suite))
    assert proc.returncode == 2
    _one_line_error(proc.stderr, "deep.toml", "nested more than 16 deep")
    shallow = tmp_path / "shallow.toml"
    shallow.write_text('name = "deep"\nx = ' + "[" * 20 + "]" * 20 + "\n")  # past the limit, no recursion
    proc = run_main("render", str(shallow))
    assert proc.returncode == 2
    _one_line_error(proc.stderr, "nested more than 16 deep")


# --- case 14: a night whose value is not a finite number ------------------------------------------------


@pytest.mark.parametrize("bad", [[5], [3, 5, 8, 11]])
def test_14_a_night_that_is_not_finite_is_left_out_of_its_series(bad: list[int]) -> None:
    from ycsb_runner.nightly.regress import EXIT_REGRESSION, REGRESSION, RegressOptions, regress

    nights = _nights(16)
    for night in nights[-2:]:  # two -50 % nights: a regression
        night["throughput_ops_s"] *= 0.5
    values = [np.inf, np.nan, -np.inf, None]
    for i, n in enumerate(bad):
        nights[n]["throughput_ops_s"] = values[i % len(values)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning either
        out = regress(*_history(nights), "quick", RegressOptions())
    assert out.exit_code == EXIT_REGRESSION
    tp = out.table[out.table["metric"] == "throughput_ops_s"].iloc[0]
    assert tp["verdict"] == REGRESSION and tp["change_run"] == "night-14"
    assert f"{len(bad)} night(s) left out" in tp["note"] and f"night-{bad[0]:02d}" in tp["note"]
    assert f"{len(bad)} night value(s) left out of 1 series" in out.reason
    assert out.summary()["nights_left_out"] == len(bad)
    others = out.table[out.table["metric"] != "throughput_ops_s"]
    assert not others["note"].fillna("").str.contains("left out").any()  # the other series are whole


# --- case 15: parse of random bytes in bounded memory ---------------------------------------------------


def test_15_a_capture_is_read_in_bounded_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    from ycsb_runner.parse import stream

    monkeypatch.setattr(stream, "MAX_PIECE", 64 << 10)
    data = np.random.default_rng(15).bytes(2 << 20)

    class Counting(io.BytesIO):
        largest = 0

        def read(self, n: int | None = -1) -> bytes:
            Counting.largest = max(Counting.largest, -1 if n is None else n)
            return super().read(n)

    pieces = list(stream.read_chunks(Counting(data), 4096))
    assert b"".join(pieces) == data  # nothing lost or repeated
    assert max(map(len, pieces)) <= 64 << 10 and len(pieces) > 20
    assert 0 < Counting.largest <= 4096  # read as it goes, never whole


def test_15_parse_of_random_bytes_is_one_line_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.stdout"
    junk.write_bytes(np.random.default_rng(16).bytes(20 << 20))
    proc = run_main("parse", str(junk))
    assert proc.returncode == 2
    _one_line_error(proc.stderr, "does not look like YCSB output")


def test_15_a_capture_parsed_from_the_file_equals_one_parsed_in_memory() -> None:
    from ycsb_runner.parse import parse_output
    from ycsb_runner.parse.run_output import parse_capture

    for name in ("flaky", "timeseries", "hdr_both", "killed"):
        out, err = DATA / f"{name}.stdout", DATA / f"{name}.stderr"
        whole = parse_output(out.read_bytes(), err.read_bytes())
        streamed = parse_capture(out, err, keep_status=True)
        assert streamed.completion == whole.completion, name
        assert streamed.measurement_type == whole.measurement_type, name
        pd.testing.assert_frame_equal(streamed.operations, whole.operations)
        pd.testing.assert_frame_equal(streamed.status, whole.status)


# --- case 16: an HDR payload that declares more counts than its range holds ------------------------------


def _hdr_b64(declared: int, body: bytes) -> str:
    """A V2 compressed histogram (1 us to 1 h, 3 digits) whose header declares *declared* payload bytes."""
    inner = struct.pack(">iiiiqqd", 0x1C849303, declared, 0, 3, 1, 3_600_000_000, 1.0) + body
    packed = zlib.compress(inner, 9)
    return base64.b64encode(struct.pack(">ii", 0x1C849304, len(packed)) + packed).decode()


def test_16_an_hdr_payload_is_inflated_no_further_than_its_range_allows() -> None:
    from ycsb_runner.parse.hdr import decode_histogram

    with pytest.raises(ValueError, match="declares 400,000,000 bytes; its range holds at most"):
        decode_histogram(_hdr_b64(400_000_000, bytes(20 << 20)))
    with pytest.raises(ValueError, match="holds more than the 100 bytes it declares"):
        decode_histogram(_hdr_b64(100, bytes(20 << 20)))


# --- the step that failed for several reasons -----------------------------------------------------------


def test_a_failed_step_lists_every_reason() -> None:
    """YCSB's operation sections cut from the summary, and 96 % of the operations failed: both are said."""
    from ycsb_runner.parse import parse_output

    out = DATA / "flaky.stdout"
    kept = [ln for ln in out.read_text().splitlines(keepends=True) if ln.startswith("[OVERALL]")]
    err = (DATA / "flaky.stderr").read_text()
    # 96 % of the reads fail: each status line counts 1 READ for every 24 READ-FAILED
    err = re.sub(r"\[READ: Count=[1-9]\d*", "[READ: Count=1", err)
    err = re.sub(r"\[READ-FAILED: Count=[1-9]\d*", "[READ-FAILED: Count=24", err)
    run = parse_output("".join(kept).encode(), err.encode())
    reasons = run.completion.reasons
    assert run.completion.status == "truncated"
    assert any("summary has no such section" in r for r in reasons), reasons
    assert any("READ 96 of 100 in the status lines" in r for r in reasons), reasons  # the phase's rate
    # a phase within --max-error-rate: the operation over it is named all the same
    run = parse_output("".join(kept).encode(), err.encode(), max_error_rate=0.2)
    reasons = run.completion.reasons
    assert run.completion.status == "truncated"
    assert any("summary has no such section" in r for r in reasons), reasons
    assert any(r.startswith("READ: 96% of its operations failed in the status lines") for r in reasons), (
        reasons
    )

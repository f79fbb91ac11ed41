"""Issue 38's property test of output neutralisation: random text from a hostile alphabet (terminal
controls, bidi overrides, the markup of every medium, CSV's specials) as a run's tag, suite description and
notes, and a step's reasons and warnings (YCSB's own lines), through every output format of ``runs``,
``regress``, ``table``, ``compare``, ``report`` and the regress report, each output parsed back
(csv.reader, a CommonMark/GFM parser, an HTML parser, the terminal text). A bounded number of examples:
each one runs about 20 commands."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from property_examples import examples
from test_hostile_round3 import ESC_TAG, IMG, SUITE, _csv_rows, _html, _markdown
from test_regress import NOISE, _nightly_folders
from typer.testing import CliRunner

from ycsb_runner.cli import app

# --- property: no control sequence, tag or extra cell survives in any output ----------------------------

# What a hostile tag may hold: terminal controls, bidi overrides, markup of every medium, CSV's specials.
HOSTILE = st.lists(
    st.sampled_from(
        [*"\x1b\x07\x00\x08\x9b\r\n\t\u202e\u2028|`*_[]()<>&\"',;=$\\^#!-+ aZ", "<img src=x>", "]]>", "-->"]
    ),
    min_size=1,
    max_size=24,
).map("".join)
CONTROL = ("\x1b", "\x07", "\x00", "\x08", "\x9b", "\u202e", "\u2028")


def _no_controls(text: str) -> None:
    for c in CONTROL:
        assert c not in text, (c, text)


def _check_markdown(text: str) -> None:
    tables, html = _markdown(text)
    assert html == [], html
    for table in tables:
        assert len(set(table)) == 1, table
    _no_controls(text.replace("\n", ""))


def _check_csv(text: str, n_rows: int) -> None:
    rows = _csv_rows(text)
    assert len(rows) == 1 + n_rows and {len(r) for r in rows} == {len(rows[0])}, rows


def _check_html(text: str, n_img: int) -> None:
    page = _html(text)
    assert page.tags.count("img") == n_img and "script" not in page.tags, page.tags
    _no_controls(text)


@pytest.fixture(scope="module")
def hostile_nights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Nine nights (a throughput regression on the last two), a history built once; each example re-tags
    night 7. Only the throughput series change (their latencies as before): the regress report draws a trend
    plot per flagged series, each with night 7's tag, and a few show the tag as well as all would."""
    results = tmp_path_factory.mktemp("hostile") / "results"
    _nightly_folders(results, [*NOISE, 0.6, 0.6], latencies=False)
    return results


def _retag(results: Path, value: str) -> None:
    """Night 7's tag *value*, and its suite's description and notes, its first step's reasons and warnings
    (a YCSB error line), in its manifest and the history."""
    m = json.loads((results / "night-07" / "manifest.json").read_text())
    m["tags"] = {"k": value}  # its only tag: no comma of a joined list quotes the cell by chance
    m["suite"].update(description=value, notes=value)
    m["steps"][0].update(reasons=[value, "second"], warnings=[value])
    (results / "night-07" / "manifest.json").write_text(json.dumps(m))
    res = CliRunner().invoke(app, ["history", "rebuild", "--results", str(results)])
    assert res.exit_code == 0, res.output


def _renamed(results: Path, value: str) -> tuple[Path, Path]:
    """Copies of nights 6 and 7 outside the results folder whose manifests name the suite *value* (a
    hand-edited or foreign manifest): the title of ``table``, ``compare`` and ``report``."""
    pair = []
    for night in ("night-06", "night-07"):
        copy = results.parent / "renamed" / night
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(results / night, copy)
        m = json.loads((copy / "manifest.json").read_text())
        m["suite"]["name"] = value
        (copy / "manifest.json").write_text(json.dumps(m))
        pair.append(copy)
    return pair[0], pair[1]


@settings(
    max_examples=examples(4),
    deadline=None,
    phases=(Phase.explicit, Phase.generate),  # (each example runs 20 commands: no shrinking)
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(value=HOSTILE)
@example(value=f"{ESC_TAG}{IMG}\r|`x`\n$\\foo^$")
@example(value="a\rb")  # a lone \r: only a csv_text that quotes it keeps the row whole
def test_hostile_text_is_neutralised_in_every_output(hostile_nights: Path, value: str) -> None:
    """Terminal and Markdown: no control character; Markdown: no raw HTML and every row of a table as many
    cells as its header; CSV: csv.reader reads as many rows as JSON has, each as wide as the header; HTML:
    no tag but the report's own figures."""
    results = hostile_nights
    _retag(results, value)
    base, night = _renamed(results, value)
    r = ["--results", str(results)]

    def run(*args: str, code: int = 0) -> str:
        res = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})
        # (an exception the command did not handle is exit 1 too, regress's "regressed")
        assert res.exception is None or isinstance(res.exception, SystemExit), (args, res.exception)
        assert res.exit_code == code, (args, res.output)
        if "csv" not in args and "json" not in args:  # the data formats carry the text as it is
            _no_controls(res.stdout.replace("\n", "") + res.stderr.replace("\n", ""))
        if "markdown" in args:
            _check_markdown(res.stdout)
        return res.stdout

    for command, code in ((["runs", *r], 0), (["regress", SUITE, *r, "--all"], 1)):
        run(*command, code=code)
        run(*command, "-f", "markdown", code=code)
        rows = json.loads(run(*command, "-f", "json", code=code))["rows"]
        _check_csv(run(*command, "-f", "csv", code=code), len(rows))
    assert any(value in str(row["change_tags"]) for row in rows)  # (regress's JSON: the tag as it is)
    for command in (["table", str(night)], ["compare", str(base), str(night)]):
        run(*command)
        run(*command, "-f", "markdown")
    folder = results.parent / "reports"
    shutil.rmtree(folder, ignore_errors=True)
    run("regress", SUITE, *r, "--report", str(folder / "regress"), code=1)
    md = (folder / "regress" / "regress.md").read_text()
    _check_markdown(md)
    _check_html((folder / "regress" / "regress.html").read_text(), md.count("](regress-figures/"))
    run("report", str(night), "--out", str(folder / "run"))
    md = (folder / "run" / "report.md").read_text()
    _check_markdown(md)
    _check_html((folder / "run" / "report.html").read_text(), md.count("](report-figures/"))

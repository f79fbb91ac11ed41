"""The one document model (``ycsb_runner.report``): a report is built once and every format shows every one
of its sections; text from data is escaped for each medium by its renderer; a format registered in one place
serves ``report`` as it serves the table commands."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from ycsb_runner.analyse.analysis import RunAnalysis
from ycsb_runner.cli import app
from ycsb_runner.present import output
from ycsb_runner.present.document import Banner, Document, Facts, Figure, Note, Section, Table, as_data
from ycsb_runner.report import html
from ycsb_runner.report.pages import write_pages
from ycsb_runner.report.run_report import run_document

DATA = Path(__file__).parents[1] / "data"
HOSTILE = "<img src=x onerror=alert(1)>\x1b[2J|*_x_*`y`\n# not a heading [l](http://e)"


@pytest.fixture(scope="module")
def run_doc() -> Document:
    return run_document(RunAnalysis.of(DATA / "runs" / "audit-analyse"))


def _headings(doc: Document) -> list[str]:
    return [s.heading for s in doc.sections if s.heading is not None]


def test_the_run_report_has_its_sections(run_doc: Document) -> None:
    assert _headings(run_doc) == [  # the answer first (issue 49), then the detail in the study's layout
        "UNVERIFIED audit on vs off: the change per mix",
        "Audit overhead per mix (on vs off, % of the off value)",
        "audit-analyse-tiny: UNVERIFIED audit off → on per mix (server-side figures)",
        "Plots",
        "Run",
        "Audit off (A) vs on (B): statistics",
        "Steps",
    ]
    assert any(isinstance(b, Banner) for b in run_doc.sections[0].blocks)


@pytest.mark.parametrize("fmt", ["html", "markdown-page", "table", "csv", "json", "markdown"])
def test_every_section_appears_in_every_format(run_doc: Document, fmt: str) -> None:
    """The HTML and Markdown pages, and ``report --format`` through each registered format."""
    if fmt == "html":
        text = html.HTML.page(run_doc)
        said = re.findall(r"<h2>(.*?)</h2>", text)
        assert said == [output.textsafe.html(h) for h in _headings(run_doc)]
        return
    if fmt == "markdown-page":
        said = re.findall(r"^## (.*)$", output.MARKDOWN.page(run_doc), flags=re.M)
        assert said == [output.textsafe.markdown(h) for h in _headings(run_doc)]
        return
    res = CliRunner().invoke(
        app, ["report", str(DATA / "runs" / "audit-analyse"), "-f", fmt], env={"COLUMNS": "250"}
    )
    assert res.exit_code == 0, res.output
    if fmt == "json":  # every section in the page's order, the answer also under "summary"
        data = json.loads(res.stdout)
        said = [s["heading"] for s in data["sections"] if s["heading"]]
        assert data["summary"]["heading"] == said[0]
    elif fmt == "csv":
        said = list(dict.fromkeys(pd.read_csv(__import__("io").StringIO(res.stdout))["section"]))[1:]
    elif fmt == "markdown":
        said = re.findall(r"^## (.*)$", res.stdout, flags=re.M)
        assert res.stdout == output.MARKDOWN.page(run_doc)
    else:
        said = [h for h in _headings(run_doc) if h in res.stdout]
    assert [output.textsafe.markdown(h) if fmt == "markdown" else h for h in _headings(run_doc)] == said


def _hostile_doc() -> Document:
    frame = pd.DataFrame({"tag": [HOSTILE], "throughput_ops_s": [1234.5]})
    blocks = [
        Banner(HOSTILE, lead=HOSTILE),
        Table(frame),
        Facts([(HOSTILE, HOSTILE)]),
        Figure("f", HOSTILE, [b"\x89PNG"]),
        Note(HOSTILE, "warning"),
        Note(HOSTILE, "aside"),
        Note(HOSTILE),
    ]
    return Document(HOSTILE, HOSTILE, [Section(None, blocks[:1]), Section(HOSTILE, blocks[1:])], "figs")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, dict(attrs)))


def test_html_escapes_every_text_from_data() -> None:
    page = html.HTML.page(_hostile_doc())
    assert "\x1b" not in page and "\\x1b[2J" in page
    parser = _Tags()
    parser.feed(page)
    images = [attrs for tag, attrs in parser.tags if tag == "img"]
    assert [a["src"].startswith("data:image/png;base64,") for a in images] == [True]  # the figure's only
    assert not any("onerror" in a for _, a in parser.tags)
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") == 13  # title, h1, h2 and every text of a block


def test_markdown_escapes_every_text_from_data() -> None:
    page = output.MARKDOWN.page(_hostile_doc())
    assert "\x1b" not in page
    tokens = MarkdownIt("commonmark").enable(["table", "strikethrough"]).parse(page)
    kinds = {t.type for t in tokens} | {c.type for t in tokens for c in (t.children or [])}
    assert not kinds & {"html_inline", "html_block", "link_open", "code_inline", "s_open"}, (
        kinds
    )  # (em: an aside)
    assert [t.tag for t in tokens if t.type == "heading_open"] == ["h1", "h2"]  # no "# not a heading"
    rows = [line for line in page.splitlines() if line.startswith("| ")]
    assert {line.replace("\\|", "").count("|") for line in rows} == {3}  # one row per line, two cells
    assert "![" in page and "](figs/f.png)" in page


def test_the_data_formats_carry_the_text_as_it_is() -> None:
    data = as_data(_hostile_doc())
    assert data["title"] == HOSTILE and data["sections"][1]["heading"] == HOSTILE
    assert data["sections"][1]["blocks"][0]["table"][0]["tag"] == HOSTILE
    assert data["sections"][0]["blocks"][0]["banner"] == f"{HOSTILE} {HOSTILE}"


def test_the_terminal_shows_no_control_character(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    output.renderer("table").document(_hostile_doc())
    shown = capsys.readouterr().out
    assert "\x1b" not in shown and "\\x1b[2J" in shown and "tag" in shown


def test_the_pages_are_written_with_their_figures(tmp_path: Path) -> None:
    html_path, md_path = write_pages(_hostile_doc(), tmp_path, "p.html", "p.md")
    assert (tmp_path / "figs" / "f.png").read_bytes() == b"\x89PNG"
    assert html_path.read_text().startswith("<!DOCTYPE html>") and md_path.read_text().startswith("# ")


class Toy(output.Renderer):
    """Each table as its title."""

    name = "toy"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def table(self, table: Table) -> None:
        self.seen.append(table.title)


def test_a_registered_format_serves_report(monkeypatch: pytest.MonkeyPatch, run_doc: Document) -> None:
    toy = Toy()
    monkeypatch.setitem(output.FORMATS, "toy", toy)
    res = CliRunner().invoke(app, ["report", str(DATA / "runs" / "audit-analyse"), "-f", "toy"])
    assert res.exit_code == 0, res.output
    assert list(dict.fromkeys(toy.seen))[1:] == _headings(run_doc)


def test_an_unregistered_format_is_refused_by_report(tmp_path: Path) -> None:
    run = shutil.copytree(DATA / "runs" / "audit-analyse", tmp_path / "run")
    res = CliRunner().invoke(app, ["report", str(run), "-f", "tsv"])
    assert res.exit_code == 2 and "'tsv' is not one of 'table', 'csv', 'json', 'markdown'" in res.output
    assert not (run / "report.html").exists()

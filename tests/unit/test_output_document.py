"""Every command answers a document: a command's answer of one table (``Document.of``) written by each of the
five renderers (terminal, CSV, JSON, Markdown, HTML), and the HTML renderer escaping what came from data."""

from __future__ import annotations

import io
import json
from html.parser import HTMLParser

import pandas as pd
import pytest

from ycsb_runner.present import output
from ycsb_runner.present.document import Document, Table
from ycsb_runner.report.html import HTML

SCRIPT = "<script>alert(1)</script>"


def _answer(hostile: str = "read50") -> Document:
    frame = pd.DataFrame({"mix": ["read100", hostile], "throughput_ops_s": [1234.5, 2000.0]})
    table = Table(frame, title="the answer", extra={"suite": "quick"}, caption=["legend", hostile])
    return Document.of(table)


class _Page(HTMLParser):
    """The tags of a page and the text of its cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[str] = []
        self._in_cell = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append(tag)
        self._in_cell = tag == "td"

    def handle_endtag(self, tag: str) -> None:
        self._in_cell = False

    def handle_data(self, data: str) -> None:
        if self._in_cell:
            self.cells.append(data)


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "markdown", "html"])
def test_a_document_of_one_table_renders_in_every_format(
    fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    (HTML if fmt == "html" else output.renderer(fmt)).document(_answer())
    out = capsys.readouterr().out
    if fmt == "table":  # its title, its figures by the one formatter, its caption's lines under it
        lines = out.splitlines()
        assert lines[0].strip() == "the answer" and lines[-2:] == ["legend", "read50"]
        assert [ln.split()[:2] for ln in lines[:-2] if ln.lstrip().startswith("read")] == [
            ["read100", "1,234"],
            ["read50", "2,000"],
        ]
    elif fmt == "csv":  # every column under its own name, raw
        back = pd.read_csv(io.StringIO(out))
        assert back.to_dict("list") == {"mix": ["read100", "read50"], "throughput_ops_s": [1234.5, 2000.0]}
    elif fmt == "json":  # {"title", ...extra, "rows"}
        assert json.loads(out) == {
            "title": "the answer",
            "suite": "quick",
            "rows": [
                {"mix": "read100", "throughput_ops_s": 1234.5},
                {"mix": "read50", "throughput_ops_s": 2000.0},
            ],
        }
    elif fmt == "markdown":
        assert out.splitlines() == [
            "## the answer",
            "",
            "| mix | throughput_ops_s |",
            "|---|---|",
            "| read100 | 1,234 |",
            "| read50 | 2,000 |",
        ]
    else:
        page = _Page()
        page.feed(out)
        assert out.startswith("<!DOCTYPE html>") and "<h1>the answer</h1>" in out
        assert page.cells == ["read100", "1,234", "read50", "2,000"]
        assert "<th>throughput (ops/s)</th>" in out and "legend<br>read50" in out


def test_the_html_renderer_escapes_a_hostile_cell_and_caption(capsys: pytest.CaptureFixture[str]) -> None:
    HTML.document(_answer(SCRIPT))
    out = capsys.readouterr().out
    page = _Page()
    page.feed(out)
    assert "script" not in page.tags  # neither the cell nor the caption opened an element
    assert out.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 2  # the cell and the caption's line
    assert SCRIPT in page.cells

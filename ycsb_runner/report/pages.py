"""A document written as its two pages, HTML and Markdown (their renderers: ``html.HTML``,
``output.MARKDOWN``), with its figures' files beside them."""

from __future__ import annotations

from pathlib import Path

from ycsb_runner.present.document import Document, figure_files
from ycsb_runner.present.output import MARKDOWN
from ycsb_runner.report.html import HTML
from ycsb_runner.safe.files import atomic_write_bytes, check_inside


def write_pages(doc: Document, out: Path, html_name: str, md_name: str) -> tuple[Path, Path]:
    """*doc* as *out*/*html_name* (self-contained) and *out*/*md_name* (+ its figure folder); every path
    is checked before anything is written, nothing is written through a link out of *out*."""
    files = {out / doc.figure_dir / name: png for name, png in figure_files(doc)}
    files[out / html_name] = HTML.page(doc).encode("utf-8")
    files[out / md_name] = MARKDOWN.page(doc).encode("utf-8")
    for path in (out / html_name, out / md_name, out / doc.figure_dir):
        check_inside(out, path)
    for path, data in files.items():
        atomic_write_bytes(path, data, within=out)
    return out / html_name, out / md_name

"""A document written as its two pages, HTML and Markdown, with its figures' files beside them."""

from __future__ import annotations

from pathlib import Path

from ycsb_runner.report import html, markdown
from ycsb_runner.report.document import Document
from ycsb_runner.store import atomic_write_bytes, atomic_write_text, check_inside


def write_pages(doc: Document, out: Path, html_name: str, md_name: str) -> tuple[Path, Path]:
    """*doc* as *out*/*html_name* (self-contained) and *out*/*md_name* (+ its figure folder); nothing
    written through a link out of *out*."""
    html_path, md_path, fig_dir = out / html_name, out / md_name, out / doc.figure_dir
    for path in (html_path, md_path, fig_dir):  # before anything is written
        check_inside(out, path)
    out.mkdir(parents=True, exist_ok=True)
    for figure in doc.figures():
        for name, png in figure.files():
            atomic_write_bytes(fig_dir / name, png, within=out)
    atomic_write_text(html_path, html.page(doc), within=out)
    atomic_write_text(md_path, markdown.page(doc), within=out)
    return html_path, md_path

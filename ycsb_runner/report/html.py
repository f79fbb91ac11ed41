"""A document as one self-contained HTML page: its CSS inline, figures as inline PNGs, every text from data
through ``textsafe.html``."""

from __future__ import annotations

import base64
import html
import re
from typing import TYPE_CHECKING

from ycsb_runner import textsafe
from ycsb_runner.report.document import Banner, Document, Facts, Figure, Note, Table

if TYPE_CHECKING:
    import pandas as pd

CSS = """body{font-family:sans-serif;margin:2em;max-width:1400px;color:#222}
@media (max-width:900px){body{margin:1em}}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px;
text-align:right}th{background:#eee}td:first-child{text-align:left}img{max-width:100%;height:auto;display:block}
.panels{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start;margin:1em 0}
h1{font-size:1.6em}code{background:#f4f4f4}
.warn{background:#fff3cd;border:2px solid #e0a800;padding:.8em 1em;margin:1em 0;font-size:1.05em}
.fail{background:#f8d7da;border-color:#c82333}
figcaption{font-size:13px;color:#444;margin-bottom:2em}td.t{text-align:left;max-width:34em}td.p{min-width:14em}
th{vertical-align:bottom}th+td{text-align:left}td.w{overflow-wrap:anywhere}
@media (max-width:900px){table{font-size:12px}td,th{padding:2px 3px}td.p{min-width:6em}}"""


def table_html(df: pd.DataFrame) -> str:
    """*df* as an HTML table: numbers right-aligned, text (prose, names) left-aligned, headers in words
    (``output.column_label``)."""
    from ycsb_runner.output import column_label, display_frame
    from ycsb_runner.termtable import is_number_text

    text = display_frame(df)
    text = text.map(textsafe.terminal).rename(columns=textsafe.terminal) if not text.empty else text
    body = text.rename(columns=column_label).to_html(index=False, escape=True, border=0)

    def cell(match: re.Match[str]) -> str:
        inner = match.group(1)
        plain = html.unescape(inner)
        number = is_number_text(plain) or plain in ("-", "")
        if number:
            return f"<td>{inner}</td>"
        prose = len(plain) > 40  # folded to a readable width, never to a word per line
        classes = "t p" if prose else "t"
        if max(map(len, re.split(r"[\s-]+", plain))) >= 18:  # a long name may fold anywhere, not off the page
            classes += " w"
        return f"<td class='{classes}'>{inner}</td>"

    return "<div class='scroll'>" + re.sub(r"<td>(.*?)</td>", cell, body, flags=re.S) + "</div>"


def _banner(b: Banner) -> str:
    esc = textsafe.html
    classes = "warn fail" if b.failure else "warn"
    anchor = f" id='{esc(b.anchor)}'" if b.anchor else ""
    text = f"<strong>{esc(b.text)}</strong>" if b.strong else esc(b.text)
    # (the lead is the report's own words: an element's text, its quotes left as they are)
    lead = f"<strong>{html.escape(textsafe.terminal(b.lead), quote=False)}</strong> " if b.lead else ""
    return f"<div class='{classes}'{anchor}>{lead}{text}</div>"


def _figure(f: Figure) -> str:
    esc = textsafe.html
    images = []
    for i, png in enumerate(f.panels, 1):
        alt = f"{esc(f.caption)} ({i}/{len(f.panels)})" if f.numbered else esc(f.caption)
        images.append(
            f"<img alt='{alt}' src=\"data:image/png;base64,{base64.b64encode(png).decode('ascii')}\">"
        )
    shown = f"<div class='panels'>{''.join(images)}</div>" if f.numbered else "".join(images)
    return f"<figure>{shown}<figcaption>{esc(f.caption)}</figcaption></figure>"


def _note(n: Note) -> str:
    if not n.text:
        return ""
    return (
        f"<p class='warn'>{textsafe.html(n.text)}</p>"
        if n.kind == "warning"
        else f"<p>{textsafe.html(n.text)}</p>"
    )


def _facts(f: Facts) -> str:
    rows = [f"<tr><th>{textsafe.html(k)}</th><td>{textsafe.html(v)}</td></tr>" for k, v in f.rows]
    return "\n".join(["<table>", *rows, "</table>"])


def block_html(block: Banner | Table | Facts | Figure | Note) -> str:
    """One block of a section as HTML."""
    if isinstance(block, Table):
        return table_html(block.frame)
    writer = {Banner: _banner, Figure: _figure, Note: _note, Facts: _facts}[type(block)]
    return writer(block)  # type: ignore[operator]


def page(doc: Document) -> str:
    """The whole page."""
    esc = textsafe.html
    lines = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{esc(doc.title)}</title>"
        f"<style>{CSS}</style></head><body>",
        f"<h1>{esc(doc.heading)}</h1>",
    ]
    for section in doc.sections:
        if section.heading is not None:
            lines.append(f"<h2>{esc(section.heading)}</h2>")
        lines += [block_html(b) for b in section.blocks]
    lines.append("</body></html>\n")
    return "\n".join(lines)

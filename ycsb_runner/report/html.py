"""The HTML renderer (``HTML``): any document as one self-contained HTML page, its CSS inline, figures as
inline PNGs, every text from data through ``safe.text.html`` (the pages ``report``, ``regress --report`` and
``site`` write)."""

from __future__ import annotations

import base64
import html
import json
import re
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import typer

from ycsb_runner.present.document import (
    Banner,
    Block,
    Chart,
    Document,
    Facts,
    Figure,
    Links,
    Note,
    Spark,
    Table,
)
from ycsb_runner.present.output import Renderer, column_label, display_frame
from ycsb_runner.present.termtable import is_number_text
from ycsb_runner.safe import text as textsafe

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
@media (max-width:900px){table{font-size:12px}td,th{padding:2px 3px}td.p{min-width:6em}}
nav.links a{margin-right:1.2em}.chart{width:100%;min-height:200px}.filters select{margin:0 1em .5em .3em}
a.spark{display:inline-block;margin:4px;padding:4px;border:1px solid #ddd;font-size:11px;color:#222;
text-decoration:none;width:170px;vertical-align:top}a.spark:hover{border-color:#888}a.spark .r{color:#c82333}
a.spark svg{display:block}"""

# The site's shared script (``ycsb_runner.site`` writes it once into its assets): draws every chart of a page
# from its data (Plotly), a click on a point opens its link; filters tables by their selects (preset by the
# page address's #column=value).
SITE_JS = """(function(){
function filter(t){var sels=document.querySelectorAll('select[data-table="'+t.id+'"]');var n=0;
for(var r of t.tBodies[0].rows){var show=true;for(var s of sels){if(s.value!==''&&
r.cells[+s.dataset.col].textContent!==s.value){show=false;}}r.style.display=show?'':'none';if(show)n++;}
var c=document.getElementById(t.id+'-shown');if(c)c.textContent=n+' of '+t.tBodies[0].rows.length+' shown';}
var want=new URLSearchParams(location.hash.slice(1));
document.querySelectorAll('select[data-table]').forEach(function(s){if(want.has(s.name))s.value=want.get(s.name);
s.addEventListener('change',function(){filter(document.getElementById(s.dataset.table));});});
document.querySelectorAll('table.filterable').forEach(filter);
document.querySelectorAll('div.chart').forEach(function(div){
var d=JSON.parse(document.getElementById(div.id+'-data').textContent);
if(typeof Plotly==='undefined'){div.textContent='the chart script did not load';return;}
Plotly.newPlot(div,d.traces,d.layout,{responsive:true,scrollZoom:true,displaylogo:false}).then(function(){
div.dataset.points=div.querySelectorAll('.scatterlayer .point').length;});
div.on('plotly_click',function(e){var p=e.points[0];var u=p.customdata;if(Array.isArray(u))u=u[0];
if(u)window.location.href=u;});});
})();
"""


def table_html(df: pd.DataFrame, links: dict[str, str] | None = None, filters: tuple[str, ...] = ()) -> str:
    """*df* as an HTML table: numbers right-aligned, text (prose, names) left-aligned, headers in words
    (``output.column_label``); *links*: a column's cells as links to the address in another column (not
    shown); *filters*: a select of each of these columns' values above the table (``SITE_JS``)."""
    links = {c: h for c, h in (links or {}).items() if c in df.columns and h in df.columns}
    shown = df.drop(columns=sorted(set(links.values())))
    text = display_frame(shown)
    text = text.map(textsafe.terminal).rename(columns=textsafe.terminal) if not text.empty else text
    marker = secrets.token_hex(8)  # a link's cell: a token no data can hold, replaced once escaped
    anchors: list[str] = []
    for col, href in links.items():
        if text.empty:
            break
        cells = []
        for value, target in zip(text[col], df[href], strict=True):
            anchors.append(f"<a href='{textsafe.html(target)}'>{html.escape(value, quote=False)}</a>")
            cells.append(f"{marker}{len(anchors) - 1}{marker}" if target else value)
        text[col] = cells
    table_id = f"t{marker[:6]}" if filters else None
    body = text.rename(columns=column_label).to_html(
        index=False, escape=True, border=0, table_id=table_id, classes="filterable" if filters else None
    )
    body = re.sub(f"{marker}(\\d+){marker}", lambda m: anchors[int(m.group(1))], body)
    selects = _filters(text, [f for f in filters if f in text.columns], table_id) if table_id else ""

    def cell(match: re.Match[str]) -> str:
        inner = match.group(1)
        plain = html.unescape(re.sub(r"<a [^>]*>|</a>", "", inner))  # a link's cell: its text
        number = is_number_text(plain) or plain in ("-", "")
        if number:
            return f"<td>{inner}</td>"
        prose = len(plain) > 40  # folded to a readable width, never to a word per line
        classes = "t p" if prose else "t"
        if max(map(len, re.split(r"[\s-]+", plain))) >= 18:  # a long name may fold anywhere, not off the page
            classes += " w"
        return f"<td class='{classes}'>{inner}</td>"

    return selects + "<div class='scroll'>" + re.sub(r"<td>(.*?)</td>", cell, body, flags=re.S) + "</div>"


def _filters(text: pd.DataFrame, columns: list[str], table_id: str) -> str:
    parts = []
    for col in columns:
        values = sorted({str(v) for v in text[col]})
        options = "".join(
            f"<option value='{html.escape(v, quote=True)}'>{html.escape(v)}</option>" for v in values
        )
        parts.append(
            f"<label>{textsafe.html(column_label(col))}<select name='{textsafe.html(col)}' "
            f"data-table='{table_id}' data-col='{list(text.columns).index(col)}'>"
            "<option value=''>all</option>"
            f"{options}</select></label>"
        )
    return f"<div class='filters'>{''.join(parts)}<span id='{table_id}-shown'></span></div>"


def script_json(data: Any) -> str:
    """*data* as JSON to sit inside a <script> element: no "<", ">" or "&" left to end it early."""
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _plain_texts(trace: dict[str, Any]) -> dict[str, Any]:
    """A trace with its texts from data (name, point text) escaped for the chart's HTML-like labels."""
    out = dict(trace)
    if "name" in out:
        out["name"] = textsafe.html(out["name"])
    if isinstance(out.get("text"), list):  # a point's text: a line, or its lines
        out["text"] = [
            None if t is None else "<br>".join(map(textsafe.html, t if isinstance(t, list) else [t]))
            for t in out["text"]
        ]
    return out


def _plain_layout(layout: dict[str, Any]) -> dict[str, Any]:
    """A layout with its texts (annotations, the chart's and its axes' titles) escaped as a trace's are: an
    axis may be titled with a metric's name from the history."""

    def title(t: Any) -> Any:
        if isinstance(t, dict) and "text" in t:
            return {**t, "text": textsafe.html(t["text"])}
        return textsafe.html(t) if isinstance(t, str) else t

    out = dict(layout)
    for key, value in layout.items():
        if key == "title":
            out[key] = title(value)
        elif key.endswith("axis") and isinstance(value, dict) and "title" in value:
            out[key] = {**value, "title": title(value["title"])}
        elif key == "annotations":
            out[key] = [{**a, "text": textsafe.html(a["text"])} if "text" in a else a for a in value]
    return out


def _chart(c: Chart, n: int) -> str:
    cid = f"chart{n}"
    data = {"traces": [_plain_texts(t) for t in c.traces], "layout": _plain_layout(c.layout)}
    return (
        f"<figure><div class='chart' id='{cid}' style='height:{int(c.height)}px'></div>"
        f"<script type='application/json' id='{cid}-data'>{script_json(data)}</script>"
        f"<figcaption>{textsafe.html(c.caption)}</figcaption></figure>"
    )


def spark_svg(values: list[float | None], marks: list[int], width: int = 160, height: int = 36) -> str:
    """*values* as an inline SVG line (None: a gap), *marks* as red ticks."""
    finite = [v for v in values if v is not None]
    if not finite:
        return f"<svg width='{width}' height='{height}'></svg>"
    lo, hi = min(finite), max(finite)
    span, n = (hi - lo) or 1.0, max(1, len(values) - 1)

    def xy(i: int, v: float) -> str:
        return f"{i * (width - 2) / n + 1:.1f},{height - 2 - (v - lo) / span * (height - 4):.1f}"

    runs: list[list[str]] = [[]]
    for i, v in enumerate(values):
        if v is None:
            runs.append([])
        else:
            runs[-1].append(xy(i, v))
    lines = "".join(
        f"<polyline fill='none' stroke='#1f77b4' stroke-width='1' points='{' '.join(r)}'/>" for r in runs if r
    )
    ticks = "".join(
        f"<line x1='{i * (width - 2) / n + 1:.1f}' x2='{i * (width - 2) / n + 1:.1f}' y1='0' y2='{height}' "
        "stroke='#c82333' stroke-width='1'/>"
        for i in marks
        if 0 <= i < len(values)
    )
    return f"<svg width='{width}' height='{height}' role='img'>{ticks}{lines}</svg>"


def _spark(s: Spark) -> str:
    state = (
        f" <span class='{'r' if s.state == 'regression' else ''}'>{textsafe.html(s.state)}</span>"
        if s.state
        else ""
    )
    return (
        f"<a class='spark' href='{textsafe.html(s.href)}'>{spark_svg(s.values, s.marks)}"
        f"{textsafe.html(s.label)}{state}</a>"
    )


def _links(links: Links) -> str:
    items = " ".join(f"<a href='{textsafe.html(h)}'>{textsafe.html(t)}</a>" for t, h in links.items)
    return f"<nav class='links'>{items}</nav>"


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


def _caption(caption: str | Sequence[str] | None) -> str:
    """A table's caption under it: a text's lines, or a sequence's items, each a line (escaped)."""
    if not caption:
        return ""
    lines = caption.split("\n") if isinstance(caption, str) else [str(c) for c in caption]
    return f"<p class='caption'>{'<br>'.join(textsafe.html(line) for line in lines)}</p>"


def block_html(block: Block, n: int = 0) -> str:
    """One block of a section as HTML (*n*: its place on the page, naming a chart)."""
    if isinstance(block, Table):
        said = "".join(f"<p>{textsafe.html(line)}</p>" for line in block.lines)
        return said + table_html(block.frame, block.links, block.filters) + _caption(block.caption)
    if isinstance(block, Chart):
        return _chart(block, n)
    writer = {Banner: _banner, Figure: _figure, Note: _note, Facts: _facts, Spark: _spark, Links: _links}
    return writer[type(block)](block)  # type: ignore[operator]


class HtmlRenderer(Renderer):
    """Any document as one page (``page``): a report, a site's page, or a command's answer (its tables, each
    after the first under its title). Not a ``--format``: ``report`` writes its page to report.html."""

    name = "html"

    def table(self, table: Table) -> None:
        typer.echo(self.page(Document.of(table)), nl=False)

    def document(self, doc: Document) -> None:
        typer.echo(self.page(doc), nl=False)

    def page(self, doc: Document) -> str:
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
            base = len(lines) * 1000  # a chart's number: as many lines before its section, and its place
            for i, b in enumerate(section.blocks):
                if not doc.page and i and isinstance(b, Table) and b.title and b.heading:
                    lines.append(f"<h2>{esc(b.title)}</h2>")
                lines.append(block_html(b, base + i))
        lines += [f"<script src='{esc(src)}'></script>" for src in doc.scripts]
        lines.append("</body></html>\n")
        return "\n".join(lines)


#: The HTML renderer.
HTML = HtmlRenderer()

"""A document as a Markdown page (GitHub-flavoured, readable at 80 columns): figures linked from its figure
folder, every text from data through ``textsafe.markdown``/``markdown_line``."""

from __future__ import annotations

from ycsb_runner import textsafe
from ycsb_runner.report.document import (
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


def _banner(b: Banner) -> str:
    if b.strong:
        return f"> **{textsafe.markdown(b.text)}**\n"
    if b.lead:
        return f"> **{textsafe.markdown(b.lead)}** {textsafe.markdown(b.text)}\n"
    return f"> {textsafe.markdown_line(b.text)}\n"


def _note(n: Note) -> str:
    if not n.text:
        return ""
    if n.kind == "aside":
        return f"_{textsafe.markdown(n.text)}_\n"
    if n.kind == "warning":
        return f"**{textsafe.markdown(n.text)}**\n"
    return f"{textsafe.markdown_line(n.text)}\n"


def _facts(f: Facts) -> str:
    esc = textsafe.markdown
    if f.listed:
        return "\n".join(f"- **{esc(k)}**: {esc(v)}" for k, v in f.rows) + "\n"
    return "\n".join(["| | |", "|---|---|", *(f"| {esc(k)} | {esc(v)} |" for k, v in f.rows)]) + "\n"


def figure_files(doc: Document) -> list[tuple[str, bytes]]:
    """(file name in ``doc.figure_dir``, PNG) of every figure's panels: the files the page links."""
    return [
        file
        for section in doc.sections
        for block in section.blocks
        if isinstance(block, Figure)
        for file in block.files()
    ]


def _figure(f: Figure, folder: str) -> str:
    cap, n = textsafe.markdown(f.caption), len(f.panels)
    if not f.numbered:
        return "\n".join(f"![{cap}]({folder}/{name})\n" for name, _ in f.files())
    links = [f"![{cap} ({i}/{n})]({folder}/{name})\n" for i, (name, _) in enumerate(f.files(), 1)]
    return "\n".join([*links, f"_{cap}_\n"])


def _link(text: str, href: str) -> str:
    return f"[{textsafe.markdown(text)}](<{href.replace('>', '%3E').replace(chr(10), '')}>)"


def block_markdown(block: Block, folder: str) -> str:
    """One block of a section as Markdown (*folder*: where the figures' files are, beside the page); a
    chart as its caption (the HTML page draws it)."""
    if isinstance(block, Table):
        from ycsb_runner.output import markdown_table

        return markdown_table(block.frame.drop(columns=sorted(set(block.links.values()))), labelled=True)
    if isinstance(block, Chart):
        return f"_{textsafe.markdown(block.caption)} (a chart on the HTML page)_\n"
    if isinstance(block, Spark):
        return f"- {_link(block.label, block.href)} {textsafe.markdown(block.state)}\n"
    if isinstance(block, Links):
        return " · ".join(_link(t, h) for t, h in block.items) + "\n"
    if isinstance(block, Figure):
        return _figure(block, folder)
    writer = {Banner: _banner, Note: _note, Facts: _facts}[type(block)]
    return writer(block)  # type: ignore[operator]


def page(doc: Document) -> str:
    """The whole page."""
    lines = [f"# {textsafe.markdown(doc.heading)}\n"]
    for section in doc.sections:
        if section.heading is not None:
            lines.append(f"## {textsafe.markdown(section.heading)}\n")
        lines += [block_markdown(b, doc.figure_dir) for b in section.blocks]
    return "\n".join(lines)


def _register() -> None:
    """``--format markdown`` writes a report as this page (``output.register_page``)."""
    from ycsb_runner.output import register_page

    register_page(Document, page)


_register()

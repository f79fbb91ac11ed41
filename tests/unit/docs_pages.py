"""The documentation a user reads: the README and the site's pages (docs/, built by `make docs`). Tests that
check what the docs say read them here, so a section that moves from the README to a page stays checked."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
GENERATED = {DOCS / "cli.md"}  # every command's --help (cog): checked by test_cli_reference


def pages() -> list[Path]:
    """The README, then every page of the site in path order (the generated CLI reference left out)."""
    return [README, *sorted(p for p in DOCS.rglob("*.md") if p not in GENERATED and "data" not in p.parts)]


def text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in pages())


def code_blocks(page: str, languages: tuple[str, ...]) -> list[str]:
    """The fenced blocks of *page* in one of *languages* (```sh, ```console ...)."""
    return [b for lang, b in re.findall(r"^```(\w*)\n(.*?)^```", page, re.S | re.M) if lang in languages]


def command_lines(block: str) -> list[tuple[str, list[str]]]:
    """The ``ycsb-runner`` command lines of a shell or console block (continuation lines joined, a ``$ ``
    prompt and environment assignments such as ``MONGODB_URL=...`` kept), each with the output lines the
    block shows after it (in a console block: up to the next ``$`` line)."""
    out: list[tuple[str, list[str]]] = []
    shown: list[str] | None = None
    for raw in block.replace("\\\n", " ").splitlines():
        line = raw.strip()
        prompt = line.startswith("$ ")
        if prompt:
            line = line[2:]
        words = line.split()
        while words and re.match(r"^[A-Z_]+=", words[0]):
            words = words[1:]
        if words and words[0] == "ycsb-runner":
            shown = []
            out.append((line, shown))
        elif prompt:
            shown = None  # another program's line (echo, grep ...)
        elif shown is not None and line and block.lstrip().startswith("$"):
            shown.append(line)  # a console block: what the command printed
    return out


def argv(line: str) -> tuple[dict[str, str], list[str]]:
    """A command line as (environment assignments, the argv after ``ycsb-runner``), up to its first pipe,
    redirection, ``;``, ``&&`` or comment."""
    words = shlex.split(line, comments=True)
    env: dict[str, str] = {}
    while words and re.match(r"^[A-Z_]+=", words[0]):
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    args: list[str] = []
    for word in words[1:]:
        if word in ("|", ";", "&&", ">", "2>&1") or word.startswith((">", ";")):
            break
        args.append(word.rstrip(";"))
        if word.endswith(";"):
            break
    return env, args

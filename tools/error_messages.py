"""The one-line errors ycsb-runner can print, read from its source: the FAQ's catalogue (docs/faq.md, by cog).

Every ``raise X(...)`` in ``ycsb_runner/`` whose X is a user-facing error (``UserError`` and its subclasses,
which ``cli.main`` prints as ``error: <message>``, and click's ``BadParameter``) gives one *template*: the
message with each computed part shown as ``…``. A message held in a variable (``raise UserError(message)``)
is built elsewhere and has no template here; nor has one with fewer than MIN_WORDS words of its own (a
wrapper such as ``f"client {name}: {err}"`` around a message shown elsewhere).

Each template has a *key*: its first KEY_WORDS words. The FAQ shows every template, so every key is on the
page; tests/unit/test_docs_errors.py fails when the code raises a message whose key the FAQ lacks (a new
error, or one whose opening words changed: run ``make cli-docs``), and when a module's errors fall under no
topic of the FAQ. Pure functions of the source text; no import of the package.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ycsb_runner"
# the exception classes the CLI prints as one `error:` line (ycsb_runner/errors.py and its subclasses)
USER_FACING = {
    "UserError",
    "RunFailed",
    "RunInterrupted",
    "AuditError",
    "SuiteError",
    "ParseError",
    "BadParameter",
}
HOLE = "…"
KEY_WORDS = 6
# a template with fewer words of its own ("…: …", "client …: …") passes on a message made elsewhere
MIN_WORDS = 2


@dataclass(frozen=True)
class Message:
    module: str  # path under ycsb_runner/, e.g. "audit/command.py"
    line: int
    template: str

    @property
    def key(self) -> str:
        return key(self.template)


def key(template: str) -> str:
    """The stable part of a template: its first KEY_WORDS words (a reworded tail keeps the key)."""
    return " ".join(template.split()[:KEY_WORDS])


def _template(node: ast.expr) -> str | None:
    """The message an expression builds, computed parts as HOLE; None when none can be read."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left = _template(node.left)
        if left is None:
            return None
        right = _template(node.right)
        return left + (right if right is not None else HOLE)
    return None


def _words(template: str) -> int:
    return len(re.findall(r"[A-Za-z]{2,}", template))


def _clean(template: str) -> str:
    text = " ".join(template.split())
    return re.sub(f"({HOLE})+", HOLE, text)


@functools.cache
def _raised(source: str) -> tuple[tuple[int, str], ...]:
    """(line, template) of each user-facing error one module's *source* raises (kept by its text: the FAQ's
    eight topics each read the whole package, in one process)."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args):
            continue
        func = node.exc.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in USER_FACING:
            continue
        template = _template(node.exc.args[0])
        if template is not None and _words(template) >= MIN_WORDS:
            out.append((node.lineno, _clean(template)))
    return tuple(out)


def messages(package: Path = PACKAGE) -> list[Message]:
    """Every user-facing error template raised in *package*, in path and line order."""
    out = []
    for path in sorted(package.rglob("*.py")):
        module = path.relative_to(package).as_posix()
        out += [
            Message(module, line, template) for line, template in _raised(path.read_text(encoding="utf-8"))
        ]
    return sorted(out, key=lambda m: (m.module, m.line))


def in_topic(module: str, prefixes: tuple[str, ...]) -> bool:
    """A module path is in a topic when it starts with one of the topic's prefixes ("audit/",
    "prepare/suite.py")."""
    return any(module == p or (p.endswith("/") and module.startswith(p)) for p in prefixes)


def _code(text: str) -> str:
    """*text* as a Markdown code span (no Markdown inside; backticks in it kept)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def catalogue(*prefixes: str, package: Path = PACKAGE) -> str:
    """The Markdown list of a topic's templates (one item per distinct template, its module named)."""
    seen: dict[str, list[str]] = {}
    for m in messages(package):
        if in_topic(m.module, prefixes):
            seen.setdefault(m.template, []).append(m.module)
    lines = []
    for template, modules in seen.items():
        where = ", ".join(sorted(set(modules)))
        lines.append(f"- {_code('error: ' + template)} <small>({where})</small>")
    return "\n".join(lines)

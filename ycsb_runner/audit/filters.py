"""Audit filters as mongod reads them, and what a filter lets through of YCSB's commands.

``auditLog.filter`` in a config file (or ``--auditFilter``) is parsed by mongod's lenient JSON parser,
and MongoDB's and Percona's documentation write filters that way: unquoted keys (``{ atype: "authCheck" }``),
single-quoted strings, ``/regex/flags`` literals, shell helpers such as ``NumberInt(1)``.
:func:`parse_filter` accepts that syntax (and strict / extended JSON). :func:`admits` evaluates a filter
against the ``authCheck`` event one YCSB command produces, in three-valued logic: True (audited), False
(not audited) or None (the filter depends on something we cannot know, e.g. ``users`` or ``remote``).
Nothing here assumes coverage: a filter that cannot be parsed or evaluated is reported as such.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bson.regex import Regex

# bson is imported where a filter is read, not with this module: every command imports it (through the
# audit strategies' registration), most never read a filter, and bson costs 40-90 ms of a start-up.

#: Shown when a filter cannot be read or understood; a run is then never labelled "on".
CANNOT_VERIFY = "cannot verify what the startup filter audits"


class FilterSyntaxError(ValueError):
    """The text is not a filter mongod's parser would accept (as far as we can tell)."""


class _Unknown:
    """A field of the audit event whose value we cannot know (users, roles, remote, ...)."""

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = _Unknown()
_MISSING = object()

# ---------------------------------------------------------------- parsing (mongod's lenient JSON)

_IDENT_START = re.compile(r"[A-Za-z_$]")
_IDENT = re.compile(r"[A-Za-z0-9_$.]*")
_NUMBER = re.compile(r"-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|Infinity)|NaN")
_NUMBER_HELPERS = {"NumberInt", "NumberLong", "NumberDecimal"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.s, self.i = text, 0

    def fail(self, what: str) -> FilterSyntaxError:
        return FilterSyntaxError(f"{what} at character {self.i + 1}")

    def ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def peek(self) -> str:
        self.ws()
        return self.s[self.i] if self.i < len(self.s) else ""

    def expect(self, ch: str) -> None:
        if self.peek() != ch:
            raise self.fail(f"expected {ch!r}")
        self.i += 1

    def value(self) -> Any:
        ch = self.peek()
        if ch == "{":
            return self.obj()
        if ch == "[":
            return self.arr()
        if ch and ch in "\"'":
            return self.string()
        if ch == "/":
            return self.regex()
        if ch and (ch.isdigit() or ch in "-."):
            return self.number()
        if ch and _IDENT_START.match(ch):
            return self.word()
        raise self.fail("expected a value")

    def obj(self) -> dict[str, Any]:
        self.expect("{")
        out: dict[str, Any] = {}
        if self.peek() == "}":
            self.i += 1
            return out
        while True:
            ch = self.peek()
            if ch and ch in "\"'":
                key = self.string()
            elif ch and _IDENT_START.match(ch):
                start = self.i
                self.i += 1
                self.i = _IDENT.match(self.s, self.i).end()  # type: ignore[union-attr]
                key = self.s[start : self.i]
            else:
                raise self.fail("expected a field name")
            self.expect(":")
            out[key] = self.value()
            ch = self.peek()
            self.i += 1
            if ch == "}":
                return out
            if ch != ",":
                self.i -= 1
                raise self.fail("expected ',' or '}'")

    def arr(self) -> list[Any]:
        self.expect("[")
        out: list[Any] = []
        if self.peek() == "]":
            self.i += 1
            return out
        while True:
            out.append(self.value())
            ch = self.peek()
            self.i += 1
            if ch == "]":
                return out
            if ch != ",":
                self.i -= 1
                raise self.fail("expected ',' or ']'")

    def string(self) -> str:
        quote = self.s[self.i]
        self.i += 1
        out: list[str] = []
        escapes = {
            "n": "\n",
            "t": "\t",
            "r": "\r",
            "b": "\b",
            "f": "\f",
            "/": "/",
            "\\": "\\",
            '"': '"',
            "'": "'",
        }
        while self.i < len(self.s):
            ch = self.s[self.i]
            self.i += 1
            if ch == quote:
                return "".join(out)
            if ch == "\\":
                esc = self.s[self.i : self.i + 1]
                self.i += 1
                if esc == "u":
                    code = self.s[self.i : self.i + 4]
                    if not re.fullmatch(r"[0-9A-Fa-f]{4}", code):
                        raise self.fail("bad \\u escape")
                    out.append(chr(int(code, 16)))
                    self.i += 4
                elif esc in escapes:
                    out.append(escapes[esc])
                else:
                    raise self.fail(f"bad escape \\{esc}")
            else:
                out.append(ch)
        raise self.fail("unterminated string")

    def regex(self) -> Regex:
        self.i += 1
        start = self.i
        while self.i < len(self.s) and self.s[self.i] != "/":
            self.i += 2 if self.s[self.i] == "\\" else 1
        if self.i >= len(self.s):
            raise self.fail("unterminated /regex/")
        pattern = self.s[start : self.i]
        self.i += 1
        flags_end = re.compile(r"[a-z]*").match(self.s, self.i).end()  # type: ignore[union-attr]
        flags = self.s[self.i : flags_end]
        self.i = flags_end
        if set(flags) - set("imsx"):
            raise self.fail(f"unknown regex flag(s) {flags!r}")
        from bson.regex import Regex

        return Regex(pattern, flags)

    def number(self) -> float | int:
        match = _NUMBER.match(self.s, self.i)
        if not match:
            raise self.fail("bad number")
        self.i = match.end()
        text = match.group()
        return int(text) if re.fullmatch(r"-?\d+", text) else float(text)

    def word(self) -> Any:
        start = self.i
        self.i = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*").match(self.s, self.i).end()  # type: ignore[union-attr]
        word = self.s[start : self.i]
        if word in ("true", "false"):
            return word == "true"
        if word == "null":
            return None
        if word in _NUMBER_HELPERS:
            self.expect("(")
            ch = self.peek()
            arg = self.string() if ch and ch in "\"'" else self.number()
            self.expect(")")
            return float(arg) if word == "NumberDecimal" else int(arg)
        self.i = start
        raise self.fail(f"unsupported value {word!r}")


def parse_filter(text: Any) -> dict[str, Any]:
    """A filter document from ``auditLog.filter`` (a document, strict/extended JSON or mongod's lenient
    syntax). Raises FilterSyntaxError when it cannot be read. Pure."""
    if isinstance(text, Mapping):
        return dict(text)
    if not isinstance(text, str) or not text.strip():
        raise FilterSyntaxError("the filter is empty or not a string")
    from bson import json_util

    try:
        doc = json_util.loads(text)
    except ValueError:
        parser = _Parser(text)
        doc = parser.value()
        if parser.peek():
            raise parser.fail("unexpected text after the filter") from None
    if not isinstance(doc, Mapping):
        raise FilterSyntaxError("the filter is not a document")
    return dict(doc)


# ---------------------------------------------------------------- evaluation (three-valued)


def _and(values: Iterable[bool | None]) -> bool | None:
    result: bool | None = True
    for v in values:
        if v is False:
            return False
        if v is None:
            result = None
    return result


def _or(values: Iterable[bool | None]) -> bool | None:
    result: bool | None = False
    for v in values:
        if v is True:
            return True
        if v is None:
            result = None
    return result


def _not(value: bool | None) -> bool | None:
    return None if value is None else not value


def _as_regex(spec: Any) -> re.Pattern[str] | None:
    bson_regex = getattr(sys.modules.get("bson.regex"), "Regex", None)  # a bson Regex needs it imported
    if bson_regex is not None and isinstance(spec, bson_regex):
        try:
            return spec.try_compile()
        except re.error:
            return None
    if isinstance(spec, re.Pattern):
        return spec
    return None


def _equals(actual: Any, wanted: Any) -> bool | None:
    if actual is UNKNOWN:
        return None
    pattern = _as_regex(wanted)
    if pattern is not None:
        return isinstance(actual, str) and pattern.search(actual) is not None
    if isinstance(wanted, Mapping | list):
        return None  # whole-document / array equality: not analysed
    if actual is _MISSING:
        return wanted is None
    return actual == wanted


def _field(event: Mapping[str, Any], path: str) -> Any:
    cur: Any = event
    for part in path.split("."):
        if cur is UNKNOWN:
            return UNKNOWN
        if not isinstance(cur, Mapping):
            return _MISSING
        cur = cur.get(part, _MISSING)
    return cur


_NOT_ANALYSED = object()  # an operator the analysis does not model ($gt, $type, $elemMatch ...)


def _operators(actual: Any, spec: Mapping[str, Any]) -> bool | None:
    results: list[bool | None] = []
    options = str(spec.get("$options", ""))
    for op, arg in spec.items():
        if op == "$options":
            continue
        got = _operator(actual, op, arg, options)
        if got is _NOT_ANALYSED:
            return None
        results.append(got)
    return _and(results)


def _operator(actual: Any, op: str, arg: Any, options: str) -> Any:
    """One query operator's answer for *actual*: True / False / None (cannot tell), or _NOT_ANALYSED."""
    if op == "$eq":
        return _equals(actual, arg)
    if op == "$ne":
        return _not(_equals(actual, arg))
    if op in ("$in", "$nin") and isinstance(arg, list):
        found = _or(_equals(actual, a) for a in arg)
        return found if op == "$in" else _not(found)
    if op == "$regex":
        pattern = _as_regex(arg) or (re.compile(arg, _flags(options)) if isinstance(arg, str) else None)
        if pattern is None:
            return _NOT_ANALYSED
        return None if actual is UNKNOWN else isinstance(actual, str) and bool(pattern.search(actual))
    if op == "$exists":
        return None if actual is UNKNOWN else (actual is not _MISSING) == bool(arg)
    if op == "$not":
        return _not(_operators(actual, arg) if isinstance(arg, Mapping) else _equals(actual, arg))
    return _NOT_ANALYSED


def _flags(options: str) -> int:
    flags = 0
    for f, bit in (("i", re.I), ("m", re.M), ("s", re.S), ("x", re.X)):
        if f in options:
            flags |= bit
    return flags


def admits(filter_doc: Mapping[str, Any], event: Mapping[str, Any]) -> bool | None:
    """Does the filter let ``event`` through? True / False / None (cannot tell). Pure."""
    results: list[bool | None] = []
    for key, spec in filter_doc.items():
        if key in ("$and", "$or", "$nor"):
            if not isinstance(spec, list) or not all(isinstance(c, Mapping) for c in spec):
                return None
            parts = [admits(c, event) for c in spec]
            results.append(_and(parts) if key == "$and" else _or(parts) if key == "$or" else _not(_or(parts)))
        elif key.startswith("$"):
            return None  # $expr, $where, $comment ...
        else:
            actual = _field(event, key)
            is_ops = isinstance(spec, Mapping) and spec and all(str(k).startswith("$") for k in spec)
            results.append(_operators(actual, spec) if is_ops else _equals(actual, spec))
    return _and(results)


def authcheck_event(command: str, namespace: str | None) -> dict[str, Any]:
    """The fields of the successful ``authCheck`` event a command produces (schema ``mongo``); what
    depends on the client (users, roles, local, remote, ts, uuid, param.args) is unknown. Pure."""
    return {
        "atype": "authCheck",
        "result": 0,
        "param": {"command": command, "ns": namespace if namespace else UNKNOWN, "args": UNKNOWN},
        "users": UNKNOWN,
        "roles": UNKNOWN,
        "local": UNKNOWN,
        "remote": UNKNOWN,
        "ts": UNKNOWN,
        "uuid": UNKNOWN,
    }


@dataclass(frozen=True)
class Coverage:
    """Which commands a filter audits: ``audited`` for sure, ``unknown`` cannot be told."""

    audited: frozenset[str]
    unknown: frozenset[str]
    not_audited: frozenset[str]

    def describe(self) -> str:
        parts = []
        if self.audited:
            parts.append("authCheck of " + ",".join(sorted(self.audited)))
        if self.unknown:
            parts.append(f"{CANNOT_VERIFY} for " + ",".join(sorted(self.unknown)))
        if not parts:
            parts.append("no CRUD (filter admits no authCheck of YCSB's commands)")
        return "; ".join(parts)


def coverage(filter_doc: Mapping[str, Any], commands: Sequence[str], namespace: str | None) -> Coverage:
    """Evaluate the filter against the authCheck event of each command on ``namespace``. Pure."""
    yes, maybe, no = set(), set(), set()
    for command in commands:
        admitted = admits(filter_doc, authcheck_event(command, namespace))
        (yes if admitted is True else no if admitted is False else maybe).add(command)
    return Coverage(frozenset(yes), frozenset(maybe), frozenset(no))

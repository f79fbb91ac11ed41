"""One regex pass that classifies every line of a stream (C speed, no per-line Python code).

Each line becomes exactly one tuple from ``re.findall`` on the whole text, so the columns below are aligned
with ``text.split("\\n")``: a status line fills label..rest, a summary line section/metric/value, a line
made only of status groups (continuation of a two-in-one status update) ``cont``, anything else ``other``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import numpy as np

_STATUS = (
    r"(?P<label>[^\n]*?)(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}) "
    r"(?P<sec>\d+) sec: (?P<ops>\d+) operations; "
    r"(?:(?P<cur>[^ ;\n]*) current ops/sec; )?"
    r"(?:est completion in (?P<eta>(?:\d+ (?:day|hour|minute|second)s? ?)+))?"
    r"(?P<rest>[^\n]*)"
)
# YCSB before 0.6 printed `[OVERALL],RunTime(ms), 10110` (no space after the first comma).
_SUMMARY = r"\[(?P<section>[^\[\]\n]+)\], ?(?P<metric>[^\n]*), (?P<value>[^,\n]*)"
_GROUP = r"(?:\[[^\[\]\n]*\]|[^\s\[\]]+ count: \d+, average latency\(us\): [^\s\[\]]+)"
# Groups are separated by whitespace; requiring it keeps the split unique (no exponential backtracking).
_CONT = rf"(?P<cont>(?=[ \t\[]|[^\s\[\]]+ count: )[ \t]*(?:{_GROUP}(?:[ \t]+{_GROUP})*)?[ \t]*)"
LINE_RE = re.compile(rf"^(?:{_STATUS}|{_SUMMARY}|{_CONT}|(?P<other>[^\n]*))$", re.M)
FIELDS = [name for name, _ in sorted(LINE_RE.groupindex.items(), key=lambda kv: kv[1])]


@dataclass
class Lines:
    """Column arrays (numpy object arrays of str, '' where a field does not apply), one entry per line."""

    n: int
    cols: dict[str, np.ndarray]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name]

    @property
    def is_status(self) -> np.ndarray:
        return self.cols["ts"] != ""

    @property
    def is_summary(self) -> np.ndarray:
        return self.cols["section"] != ""

    @property
    def is_cont(self) -> np.ndarray:
        return self.cols["cont"] != ""

    def text(self, mask: np.ndarray) -> list[str]:
        """Original text of the masked non-status, non-summary lines."""
        cont, other = self.cols["cont"][mask], self.cols["other"][mask]
        return [c or o for c, o in zip(cont.tolist(), other.tolist(), strict=True)]


def _empty() -> Lines:
    return Lines(0, {f: np.empty(0, dtype=object) for f in FIELDS})


def scan(text: str) -> Lines:
    """Classify every line of ``text`` (LF / CRLF / CR line ends)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if text.endswith("\n"):
        text = text[:-1]
    if not text:
        return _empty()
    found = LINE_RE.findall(text)
    expected = text.count("\n") + 1
    if len(found) != expected:  # cannot happen with the pattern above; stay correct if it ever does
        found = [LINE_RE.fullmatch(line).groups(default="") for line in text.split("\n")]
    table = tuples_to_array(found, len(FIELDS))
    return Lines(len(found), {name: table[:, i] for i, name in enumerate(FIELDS)})


def tuples_to_array(found: list[tuple[str, ...]], width: int) -> np.ndarray:
    """``re.findall`` tuples -> 2-D object array (C speed; zip(*found) is several times slower, and so is
    ``table[:] = found``, which has numpy discover the shape of every tuple)."""
    flat = np.fromiter(itertools.chain.from_iterable(found), dtype=object, count=len(found) * width)
    return flat.reshape(len(found), width)

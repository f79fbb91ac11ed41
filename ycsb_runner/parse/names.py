"""Classifying YCSB section names (READ, Intended-READ-FAILED, HdrUPDATE, TOTAL_GC_TIME_%_PS_Scavenge...)."""

from __future__ import annotations

import re
from collections.abc import Iterable

import pandas as pd

from ycsb_runner.operations import ALL_SECTIONS

KNOWN_OPS = ALL_SECTIONS  # every operation section YCSB 0.17.0 prints (ycsb_runner.operations)
STATUS_NAMES = frozenset(
    {
        "OK",
        "ERROR",
        "NOT_FOUND",
        "NOT_IMPLEMENTED",
        "UNEXPECTED_STATE",
        "BAD_REQUEST",
        "FORBIDDEN",
        "SERVICE_UNAVAILABLE",
        "BATCHED_OK",
    }
)
# Return codes that count as success: Status.isOk() names, and the integer 0 of YCSB <= 0.3.
SUCCESS_RETURNS = frozenset({"OK", "BATCHED_OK", "0"})
JVM_SECTIONS = frozenset(
    {
        "MAX_MEM_USED",
        "MIN_MEM_USED",
        "MAX_THREADS",
        "MIN_THREADS",
        "MAX_SYS_LOAD_AVG",
        "MIN_SYS_LOAD_AVG",
        "THREAD_COUNT",
        "USED_MEM_MB",
        "SYS_LOAD_AVG",
        "GCS",
        "GCS_TIME",
    }
)
_GC_RE = re.compile(r"^TOTAL_GC(?:_TIME_%|_TIME|S|s)(?:_(?P<gc>.+))?$")
_PARTS = (("Hdr", "hdr"), ("Bucket", "bucket"), ("Raw", "raw"))
_SUFFIX_RE = re.compile(r"^(?P<op>.+?)-(?P<status>[A-Z][A-Z0-9_]*)$")
INTENDED = "Intended-"
NAME_COLUMNS = ["operation", "kind", "intended", "outcome", "part"]
LATENCY_KINDS = frozenset({"op", "failed", "status", "intended", "hdr", "bucket", "raw"})


def _base_op(name: str) -> str:
    return name[len(INTENDED) :] if name.startswith(INTENDED) else name


def _split_part(section: str, names: frozenset[str]) -> tuple[str, str]:
    for prefix, part in _PARTS:
        if section.startswith(prefix) and len(section) > len(prefix):
            rest = section[len(prefix) :]
            if prefix == "Hdr":
                paired = f"Bucket{rest}" in names or f"Raw{rest}" in names
            else:
                paired = f"Hdr{rest}" in names
            plausible = rest.startswith(INTENDED) or _base_op(rest).split("-", 1)[0] in KNOWN_OPS
            if paired or plausible:
                return part, rest
    return "", section


def classify(
    section: str, names: frozenset[str] = frozenset(), with_returns: frozenset[str] = frozenset()
) -> dict:
    """Split a section name into operation, kind, intended, outcome and part.

    ``names`` are all section names seen (to pair Hdr*/Bucket*/Raw* sections), ``with_returns`` those that
    carry ``Return=`` lines (to recognise ``<OP>-<STATUS>`` sections for non-standard statuses).
    """
    if section == "OVERALL":
        return {"operation": "OVERALL", "kind": "overall", "intended": False, "outcome": "", "part": ""}
    gc = _GC_RE.match(section)
    if gc:
        name = gc.group("gc") or "ALL"
        return {"operation": name, "kind": "gc", "intended": False, "outcome": "", "part": ""}
    if section in JVM_SECTIONS:
        return {"operation": section, "kind": "jvm", "intended": False, "outcome": "", "part": ""}
    part, name = _split_part(section, names)
    intended = name.startswith(INTENDED) and len(name) > len(INTENDED)
    if intended:
        name = name[len(INTENDED) :]
    name, outcome = _split_outcome(name, with_returns)
    if part:
        kind = part
    elif intended:
        kind = "intended"
    elif outcome == "FAILED":
        kind = "failed"
    elif outcome:
        kind = "status"
    else:
        kind = "op"
    return {"operation": name, "kind": kind, "intended": intended, "outcome": outcome, "part": part}


def _split_outcome(name: str, with_returns: frozenset[str]) -> tuple[str, str]:
    """(operation, outcome) of ``<OP>-FAILED`` and ``<OP>-<STATUS>`` names; (name, "") for the others."""
    if name in KNOWN_OPS:
        return name, ""
    if name.endswith("-FAILED") and len(name) > len("-FAILED"):
        return name[: -len("-FAILED")], "FAILED"
    m = _SUFFIX_RE.match(name)
    if (
        m
        and m.group("op") != "READ-MODIFY"
        and (
            m.group("status") in STATUS_NAMES
            or m.group("op") in KNOWN_OPS
            or (m.group("op") in with_returns and name not in with_returns)
        )
    ):
        return m.group("op"), m.group("status")
    return name, ""


def classify_frame(sections: Iterable[str], with_returns: Iterable[str] = ()) -> pd.DataFrame:
    """Classification of each distinct section name, indexed by section."""
    uniq = list(dict.fromkeys(s for s in sections if isinstance(s, str)))
    names = frozenset(uniq)
    returns = frozenset(with_returns)
    rows = [classify(s, names, returns) for s in uniq]
    # Built column by column in its final dtype, text as Python objects (pandas would infer its string
    # dtype from a plain array; a frame of dicts and then astype took 2 ms per parse).
    index = pd.Index(uniq, name="section")
    columns = {
        c: pd.Series([r[c] for r in rows], index=index, dtype=bool if c == "intended" else object)
        for c in NAME_COLUMNS
    }
    return pd.DataFrame(columns, index=index)

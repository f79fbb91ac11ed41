"""English renderings of the published (Chinese) remarks, shown beside the original text.

The reference tables keep the vendors' text verbatim; ``english`` renders it with a small glossary of the
terms these documents use (the whole vocabulary of the shipped tables), and ``with_english`` adds a
``<column>_en`` column after every text column that holds such text.
"""

from __future__ import annotations

import re

import pandas as pd

CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")

# Longest terms first, so that a phrase wins over its parts.
GLOSSARY: tuple[tuple[str, str], ...] = (
    ("无明显变化", "no significant change"),
    ("个百分点", " percentage points"),
    ("读&更新比", "read:update "),
    ("纯插入", "insert only "),
    ("纯更新", "update only "),
    ("独享型", "dedicated"),
    ("云盘版", "cloud disk edition"),
    ("物理版", "physical edition"),
    ("云盘", "cloud disk"),
    ("上涨", "up"),
    ("降低", "down"),
    ("下降", "down"),
    ("插入", "insert"),
    ("更新", "update"),
    ("读", "read"),
    ("核", " cores "),
    ("（", " ("),
    ("）", ")"),
    ("；", "; "),
    ("：", ": "),
    ("，", ", "),
)


def has_chinese(text: object) -> bool:
    return isinstance(text, str) and bool(CJK.search(text))


def english(text: str) -> str:
    """``上涨 3 个百分点（+15%）`` -> ``up 3 percentage points (+15%)``; text without Chinese unchanged."""
    if not has_chinese(text):
        return text
    out = text
    for zh, en in GLOSSARY:
        out = out.replace(zh, en)
    out = re.sub(r"(\d) cores (\d+GB)", r"\1 cores, \2", out)
    out = re.sub(r"\s+", " ", out).replace("( ", "(").replace(" )", ")").replace(" ;", ";").strip()
    return out


def with_english(frame: pd.DataFrame) -> pd.DataFrame:
    """*frame* with ``<column>_en`` after each text column holding Chinese text."""
    out = frame.copy()
    for column in list(frame.columns):
        values = frame[column]
        if not pd.api.types.is_string_dtype(values) or not values.map(has_chinese).any():
            continue
        at = out.columns.get_loc(column) + 1
        out.insert(at, f"{column}_en", values.map(lambda v: english(v) if isinstance(v, str) else v))
    return out

"""What names one series of the history: its SERIES_KEYS values, as text (``series_id``). Below both the
history store and the alerts, which each name series by it (``ycsb_runner.nightly.history`` re-exports
both names)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

SERIES_KEYS = ["phase", "mix", "threads", "audit", "operation", "metric"]


def series_id(values: Iterable[Any]) -> tuple[str, ...]:
    """A series' SERIES_KEYS values as text (None and NaN -> "", 4.0 -> "4"): the same tuple whether the
    values come from the metrics, an acceptance, SQLite or MongoDB."""

    def text(v: Any) -> str:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return ""
        if isinstance(v, float) and v.is_integer():
            return str(int(v))
        return str(v)

    return tuple(text(v) for v in values)

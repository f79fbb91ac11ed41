"""What names one series of the history: its SERIES_KEYS values, as text (``series_id``). Below both the
history store and the alerts, which each name series by it (``ycsb_runner.runs.history`` re-exports
both names). And what regress keeps of a judged series for its report, its evidence and the site
(:class:`SeriesNights`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

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


@dataclass
class SeriesNights:
    """One series' nights as regress judged them (``RegressResult.series_values``), for its report, evidence
    and site page: *frame*, one row a night, oldest first (``run_id``, ``value``, ``low``, ``high``, ``n``);
    *change_points*, the nights (indices of *frame*) where the series changed level; *change_index*, the
    night tonight's change began or the first night tested (-1: none, as for an untested series);
    *baseline*, the [start, end) nights the tested ones were judged against ((-1, -1): none); and
    *noise_source*, whose noise the series was judged with."""

    frame: pd.DataFrame
    change_points: list[int] = field(default_factory=list)
    change_index: int = -1
    baseline: tuple[int, int] = (-1, -1)
    noise_source: str = "the series' own"

"""Number parsing: Java's Double.toString/Long.toString values and locale-formatted status numbers."""

from __future__ import annotations

import numpy as np
import pandas as pd

# Long.MAX_VALUE (an empty HdrHistogram's min) and anything near it means "no data".
NO_DATA_ABS = 9.2e18


def to_float(values: pd.Series) -> pd.Series:
    """Parse summary values (ints, doubles, E-notation, NaN, Infinity) to float64; Long.MAX_VALUE -> NaN."""
    if values.empty:
        return pd.Series(np.empty(0, dtype="float64"), index=values.index)
    out = pd.to_numeric(values.astype(object).str.strip(), errors="coerce").astype("float64")
    return out.mask(np.isfinite(out) & (out.abs() >= NO_DATA_ABS))


def to_float_locale(values: pd.Series) -> pd.Series:
    """Parse status-line numbers printed with Java's DecimalFormat/String.format in any locale we meet.

    Handles a decimal comma (``1234,57``), ``∞`` for infinity, U+FFFD (JDK 8's NaN) and ``NaN``.
    Empty strings become NaN.
    """
    if values.empty:
        return pd.Series(np.empty(0, dtype="float64"), index=values.index)
    s = values.astype(object)
    seen = "".join(str(v) for v in pd.unique(s.dropna()))
    for old, new in ((",", "."), ("\u221e", "inf"), ("\ufffd", "nan")):
        if old in seen:
            s = s.str.replace(old, new, regex=False)
    out = pd.to_numeric(s, errors="coerce").astype("float64")
    return out.mask(np.isfinite(out) & (out.abs() >= NO_DATA_ABS))


def percentile_label(p: float) -> str:
    """Column name for a percentile: 95 -> 'p95', 99.9 -> 'p99.9'."""
    return f"p{p:g}"

"""Pure helpers for the vendor reference tables: CPU range text and instance-size names."""

from __future__ import annotations

import re

_NUM = r"(\d+(?:\.\d+)?)"
_DASH = r"[-–~～]"
# "50%-100%", "60-100%", "50%100%" (dash missing, as printed once in the Tencent table)
_RANGE = re.compile(rf"^\s*{_NUM}\s*(?:%\s*(?:{_DASH}\s*)?|{_DASH}\s*){_NUM}\s*%\s*$")
_SINGLE = re.compile(rf"^\s*{_NUM}\s*%\s*$")
_SIZE = re.compile(r"^\s*(\d+)\s*(?:核|C|VCPU|CORES?)\s*(\d+)\s*(?:GB|G|GIB)\s*$", re.IGNORECASE)


def parse_cpu_range(text: str) -> tuple[float, float]:
    """Parse a printed CPU utilisation such as "77%", "50%-100%", "60-100%" or "50%100%".

    Returns ``(low_pct, high_pct)``; a single value gives ``low == high``.
    Raises ``ValueError`` for anything else, or a range that is reversed or above 100 %.
    """
    match = _RANGE.match(text) or _SINGLE.match(text)
    if match is None:
        raise ValueError(f"not a CPU percentage or range: {text!r}")
    numbers = [float(g) for g in match.groups()]
    low, high = numbers[0], numbers[-1]
    if not 0 <= low <= high <= 100:
        raise ValueError(f"CPU range out of order or above 100%: {text!r}")
    return low, high


def normalise_size(text: str) -> str:
    """Map "4核8GB", "4C8G", "4c8gb" or "4 vCPU 8 GB" to the short key "4C8G"."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"not an instance size like 4C8G: {text!r}")
    return f"{int(match.group(1))}C{int(match.group(2))}G"


def size_parts(size: str) -> tuple[int, int]:
    """``"24C128G"`` -> ``(24, 128)``: vCPUs and memory in GB."""
    match = _SIZE.match(size)
    if match is None:
        raise ValueError(f"not an instance size like 4C8G: {size!r}")
    return int(match.group(1)), int(match.group(2))


# Canonical op order for mix keys: alphabetical, so one mix always gets one key.
MIX_OPS: tuple[str, ...] = ("insert", "read", "readmodifywrite", "scan", "update")
_MIX_PART = re.compile(r"([a-z]+?)(\d+(?:\.\d+)?)")


def mix_key(**proportions: float) -> str:
    """Stable key for an operation mix, e.g. ``mix_key(read=0.95, update=0.05) == "read95_update5"``.

    Proportions are fractions (YCSB's ``readproportion`` etc.); zero parts are left out and the
    remaining ops are written in alphabetical order with their percentage.
    """
    unknown = set(proportions) - set(MIX_OPS)
    if unknown:
        raise ValueError(f"unknown operation(s) {sorted(unknown)}; expected some of {list(MIX_OPS)}")
    parts = []
    for op in MIX_OPS:
        share = proportions.get(op, 0.0)
        if share < 0 or share > 1:
            raise ValueError(f"{op} proportion {share} is outside 0..1")
        if share > 0:
            parts.append(f"{op}{round(share * 100, 3):g}")
    if not parts:
        raise ValueError("a mix needs at least one non-zero proportion")
    return "_".join(parts)


def normalise_mix(text: str) -> str:
    """Rewrite a mix key with its ops in canonical order: ``"update95_read5"`` -> ``"read5_update95"``.

    ``"load"`` is kept as is; anything but ``op<percent>`` parts joined by ``_`` raises ``ValueError``.
    """
    key = text.strip().lower()
    if key == "load":
        return key
    shares: dict[str, float] = {}
    for part in key.split("_"):
        match = _MIX_PART.fullmatch(part)
        if match is None or match.group(1) not in MIX_OPS or match.group(1) in shares:
            raise ValueError(f"not a mix key like read50_update50 or load: {text!r}")
        shares[match.group(1)] = float(match.group(2)) / 100
    return mix_key(**shares)

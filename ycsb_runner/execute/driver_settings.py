"""The effective MongoDB driver settings that ycsb-runner's binding reports on stderr at start-up.

The binding (``java/``, ``DriverSettings.describe``) prints one line, once per YCSB process::

    ycsb-runner-driver-settings {"driver_defaults": "stock", "write_concern": {...}, "retry_writes": ...}

read from the driver's own ``MongoClientSettings``. The runner keeps it per step (``steps[].driver_settings``)
and once for the run (``driver_settings``: what all steps share, and which keys differ). The stock binding
prints no such line, so a run with it has none.
"""

from __future__ import annotations

import json
from typing import Any

PREFIX = "ycsb-runner-driver-settings "

# What the binding reports; anything else in the line is dropped, so that nothing unexpected (let alone a
# credential) reaches the manifest through it.
KEYS = (
    "driver_defaults",
    "driver_version",
    "write_concern",
    "read_preference",
    "read_concern",
    "retry_writes",
    "retry_reads",
    "max_pool_size",
    "min_pool_size",
    "max_connecting",
    "max_wait_time_ms",
    "stock_wait_queue_limit",
    "compressors",
    "tls",
    "batch",  # the binding's batch-insert semantics: batchsize, upsert, write, failed_batch, last_batch
)
BATCH_KEYS = ("batchsize", "upsert", "write", "failed_batch", "last_batch")
WRITE_CONCERN_KEYS = ("w", "journal", "wtimeout_ms")


def parse_settings_line(line: str) -> dict[str, Any] | None:
    """The settings in one stderr line, or None when the line is not a settings line.

    A settings line whose JSON cannot be read (e.g. cut off) gives ``{"error": ...}`` rather than nothing, so
    that the manifest says the binding reported settings that could not be read.
    """
    text = line.rstrip("\r\n")
    if not text.startswith(PREFIX):
        return None
    try:
        doc = json.loads(text[len(PREFIX) :])
    except json.JSONDecodeError as err:
        return {"error": f"unreadable driver settings line ({err.msg} at column {err.pos + 1})"}
    if not isinstance(doc, dict):
        return {"error": "the driver settings line does not hold a JSON object"}
    out = {k: doc[k] for k in KEYS if k in doc}
    wc = out.get("write_concern")
    if isinstance(wc, dict):
        out["write_concern"] = {k: wc[k] for k in WRITE_CONCERN_KEYS if k in wc}
    batch = out.get("batch")
    if isinstance(batch, dict):
        out["batch"] = {k: batch[k] for k in BATCH_KEYS if k in batch}
    elif "batch" in out:
        del out["batch"]
    return out


def settings_from_output(text: str) -> dict[str, Any] | None:
    """The first settings line in a captured stderr, parsed; None when there is none."""
    for line in text.splitlines():
        found = parse_settings_line(line)
        if found is not None:
            return found
    return None


def common_settings(per_step: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The run-level record: the settings every step shares, and under ``varies_by_step`` the keys whose
    values differ between steps (e.g. ``max_pool_size``, which follows the thread count). None when no step
    reported settings."""
    if not per_step:
        return None
    keys = [k for k in per_step[0] if k != "varies_by_step"]
    for s in per_step[1:]:
        keys += [k for k in s if k not in keys]
    common: dict[str, Any] = {}
    varies: list[str] = []
    for k in keys:
        values = [s.get(k) for s in per_step]
        if all(v == values[0] for v in values) and all(k in s for s in per_step):
            common[k] = values[0]
        else:
            varies.append(k)
    common["varies_by_step"] = varies
    return common

"""History rows shaped as a bench writes them, for the tests that judge nights without running them
(test_regress.py, test_canaries.py): a night's run row, and the metric rows of its one run step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def night_run(i: int, *, fingerprint: str = "f", status: str = "completed") -> dict[str, Any]:
    """The run row of night *i* (``night-0i`` of the suite ``quick``, started on 2026-11-(i + 1))."""
    return {
        "run_id": f"night-{i:02d}",
        "suite": "quick",
        "fingerprint": fingerprint,
        "status": status,
        "started_at": f"2026-11-{i + 1:02d}T02:00:00.000Z",
        "tags": {"night": str(i)},
    }


def night_metrics(run_id: str, figures: Mapping[str, float]) -> list[dict[str, Any]]:
    """One metric row per figure of the run step ``02-run-a`` (mix a, 4 threads, no audit): throughput is
    OVERALL's, the other figures READ's."""
    return [
        {
            "run_id": run_id,
            "step": "02-run-a",
            "repetition": 1,
            "phase": "run",
            "mix": "a",
            "threads": 4,
            "audit": "none",
            "operation": "OVERALL" if metric == "throughput_ops_s" else "READ",
            "metric": metric,
            "value": value,
        }
        for metric, value in figures.items()
    ]

"""Regenerate the checked-in result folders the analysis tests read (real runs on the embedded server).

    .venv/bin/python tests/data/runs/regenerate.py

Writes ``tests/data/runs/tencent-analyse`` (tests/suites/analyse-tencent.toml: Tencent layout, 2 repetitions)
and ``tests/data/runs/audit-analyse`` (tests/suites/analyse-audit.toml: audit off/on, interleaved, through the
``command`` strategy flipping a state file). Takes about two minutes. ``tests/data/runs/quick-generic`` is not
made here: it is ``ycsb-runner bench quick --run-id i49-quick`` on the embedded server (6 Dec 2026), its
report files removed (a generic suite whose 15-s run steps were still rising). The analysis tests assert
relations between the files of a folder (a table cell equals the mean of operations.csv rows, ...), not fixed
numbers, so any regenerated folder passes them.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from ycsb_runner.bench import BenchOptions, run_bench

HERE = Path(__file__).resolve().parent
SUITES = HERE.parent.parent / "suites"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        state = Path(tmp) / "audit-state"
        state.write_text("off\n")
        audit = {
            "on_cmd": ["sh", "-c", f"echo on > {state}"],
            "off_cmd": ["sh", "-c", f"echo off > {state}"],
            "status_cmd": ["cat", str(state)],
        }
        for name, suite, options in (
            ("tencent-analyse", "analyse-tencent.toml", {}),
            ("audit-analyse", "analyse-audit.toml", audit),
        ):
            shutil.rmtree(HERE / name, ignore_errors=True)
            outcome = run_bench(
                BenchOptions(
                    suite=str(SUITES / suite),
                    results=HERE,
                    run_id=name,
                    sample_interval_s=1.0,
                    audit_options=options,
                    report=False,
                ),
                log=print,
            )
            print(f"wrote {outcome.run_dir}")


if __name__ == "__main__":
    main()

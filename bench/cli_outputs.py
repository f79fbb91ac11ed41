"""Capture what ``table``, ``compare`` and ``report`` print and write for the checked-in runs (a script, not a
test): run it before and after a change to the analysis and ``diff -r`` the two folders; a refactor leaves
it empty.

Usage: .venv/bin/python bench/cli_outputs.py OUT_DIR [--workers 2]

The runs under ``tests/data/runs/`` are copied to a fixed folder (``/tmp/ycsb-runner-cli-outputs/runs``)
first, so that paths in the outputs and ``--save`` files are the same on every capture and the checked-in
folders stay untouched. Each command's stdout, stderr and exit code go to ``OUT_DIR/<name>.txt``; the report
(report.md, report.html, report-figures/, written under the fixed folder) to ``OUT_DIR/report-<run>/``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = Path("/tmp/ycsb-runner-cli-outputs")
RUNS = ("tencent-analyse", "audit-analyse")
REFERENCES = ("tencent-mongodb44", "tencent-threads", "alibaba-audit")
FORMATS = ("table", "csv", "json", "markdown")
WIDTHS = ("80", "200")


def commands(runs: Path) -> dict[str, tuple[list[str], str]]:
    """name -> (ycsb-runner arguments, terminal width)."""
    cmds: dict[str, tuple[list[str], str]] = {}
    for run in RUNS:
        path = str(runs / run)
        for fmt in FORMATS:
            widths = WIDTHS if fmt == "table" else ("200",)
            for width in widths:
                cmds[f"table-{run}-{fmt}-w{width}"] = (["table", path, "--format", fmt], width)
                for ref in REFERENCES:
                    args = ["compare", path, "--reference", ref, "--format", fmt]
                    cmds[f"compare-{run}-{ref}-{fmt}-w{width}"] = (args, width)
                    cmds[f"compare-{run}-{ref}-4C8G-{fmt}-w{width}"] = ([*args, "--size", "4C8G"], width)
                cmds[f"compare-{run}-self-{fmt}-w{width}"] = (["compare", path, path, "--format", fmt], width)
                gate = ["compare", path, path, "--format", fmt, "--fail-on-regression"]
                cmds[f"compare-{run}-self-gate-{fmt}-w{width}"] = (gate, width)
        cmds[f"table-{run}-wide"] = (["table", path, "--wide"], "80")
        cmds[f"table-{run}-save"] = (["table", path, "--save", "--format", "csv"], "200")
        ref = "tencent-mongodb44" if run.startswith("tencent") else "alibaba-audit"
        cmds[f"compare-{run}-save"] = (
            ["compare", path, "--reference", ref, "--save", "--format", "csv"],
            "200",
        )
        cmds[f"report-{run}"] = (["report", path, "--out", str(WORK / f"report-{run}")], "200")
    cmds["compare-different-suites"] = (["compare", str(runs / RUNS[0]), str(runs / RUNS[1])], "200")
    return cmds


def run_one(name: str, args: list[str], width: str, out: Path) -> None:
    env = {**os.environ, "COLUMNS": width, "LINES": "50", "NO_COLOR": "1", "TERM": "dumb"}
    exe = Path(sys.executable).parent / "ycsb-runner"
    done = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, cwd=WORK)
    text = f"$ ycsb-runner {' '.join(args)}\nexit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n"
    (out / f"{name}.txt").write_text(text + done.stderr)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--workers", type=int, default=2)
    a = parser.parse_args()
    out = a.out.resolve()
    shutil.rmtree(WORK, ignore_errors=True)
    shutil.copytree(ROOT / "tests" / "data" / "runs", WORK / "runs", ignore=shutil.ignore_patterns("*.py"))
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmds = commands(WORK / "runs")
    with ThreadPoolExecutor(a.workers) as pool:
        for f in [pool.submit(run_one, n, args, w, out) for n, (args, w) in cmds.items()]:
            f.result()
    for run in RUNS:  # the reports, and what --save wrote into the run folders
        shutil.copytree(WORK / f"report-{run}", out / f"report-{run}")
        for saved in sorted((WORK / "runs" / run).glob("*.csv")):
            if saved.name.startswith(("study_table", "compare-")):
                shutil.copy(saved, out / f"saved-{run}-{saved.name}")
    print(f"{len(list(out.rglob('*.*')))} files in {out}")


if __name__ == "__main__":
    main()

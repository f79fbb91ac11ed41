"""A history judged night by night, as a nightly job would have: what did ``regress`` say each night?

    .venv/bin/python bench/rejudge_history.py RESULTS [--suite quick] [--from RUN_ID] [-- REGRESS OPTIONS]

RESULTS: a results folder with its history.sqlite (run folders optional). The folder is copied (history and
run folders; RESULTS itself is never written) and the copy's alerts table emptied, then for each run of the
suite, oldest first (by start), ``ycsb-runner regress SUITE --results COPY --until <its ended_at> -f json``
runs as its own command, as the nightly job did, raising and recovering alerts in the copy as it goes.
One line per night: run id, exit code, decision (regress' closing reason) and the flagged series (``phase
mix operation metric change%``), then a count of nights per exit code. Options after ``--`` go to regress
(``--min-effect 10``, ``--confirm 1``...).

Used for issue 47 on bench/data/quick-plan-2026-12-07 (a quiet quick history: 6 pilot nights, 10 normal
nights, then 3 with the server stopped 10 % of the time).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path


def nights(history: Path, suite: str) -> list[tuple[str, str]]:
    """(run id, ended_at) of the suite's runs in *history*, oldest first by start."""
    with sqlite3.connect(f"file:{history}?mode=ro", uri=True) as con:
        rows = con.execute(
            "SELECT run_id, ended_at FROM runs WHERE suite = ? ORDER BY started_at, run_id", (suite,)
        ).fetchall()
    return [(str(r), str(e)) for r, e in rows if e]


def copy_results(src: Path, dst: Path) -> Path:
    """A copy of the results folder *src* in *dst* with no alert in its history; the copy's path."""
    out = dst / "results"
    shutil.copytree(src, out, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
    with sqlite3.connect(out / "history.sqlite") as con:
        if con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'alerts'").fetchone():
            con.execute("DELETE FROM alerts")
    return out


def flagged(doc: dict) -> list[str]:
    """The regressed series of a regress -f json document, one short label each."""
    return [
        f"{r['phase']} {r['mix']} {r['operation']} {r['metric']} {float(r['change_pct']):+.1f}%"
        for r in doc.get("rows", [])
        if r.get("verdict") == "regression"
    ]


def judge(results: Path, suite: str, until: str, extra: list[str]) -> tuple[int, str, list[str]]:
    """(exit code, decision, flagged series) of ``regress`` on the nights up to *until*."""
    argv = [sys.executable, "-m", "ycsb_runner", "regress", suite, "--results", str(results)]
    done = subprocess.run(
        [*argv, "--until", until, "-f", "json", *extra], capture_output=True, text=True, check=False
    )
    try:
        doc = json.loads(done.stdout)
    except json.JSONDecodeError:
        last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        return done.returncode, last, []
    return done.returncode, str(doc.get("decision", "")), flagged(doc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", type=Path, help="a results folder with its history.sqlite")
    ap.add_argument("--suite", default="quick")
    ap.add_argument("--from", dest="first", help="the first run id to print (the earlier are judged too)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = ap.parse_args(argv[:cut]), argv[cut + 1 :]  # after --: regress' own options
    if not (args.results / "history.sqlite").is_file():
        sys.exit(f"no history.sqlite in {args.results}: give a results folder")
    todo = nights(args.results / "history.sqlite", args.suite)
    if not todo:
        sys.exit(f"no run of {args.suite} in {args.results / 'history.sqlite'}")
    codes: Counter[int] = Counter()
    printing = args.first is None
    with tempfile.TemporaryDirectory(prefix="rejudge-") as tmp:
        copy = copy_results(args.results, Path(tmp))
        for run_id, ended in todo:
            code, decision, series = judge(copy, args.suite, ended, extra)
            printing = printing or run_id == args.first
            if printing:
                codes[code] += 1
                print(
                    f"{run_id:<12} exit {code}  {decision}"
                    + (f" | flagged: {'; '.join(series)}" if series else "")
                )
    print("nights by exit code: " + ", ".join(f"{c}: {n}" for c, n in sorted(codes.items())))


if __name__ == "__main__":
    main()

"""How much does a `ycsb-runner` command cost before it does anything? Prints figures (a script, not a test).

For each command: the median CPU seconds (user + sys of the child process) and wall seconds over --runs
runs, and the heavy libraries its process imported (pandas, numpy, pymongo, bson, jinja2, urllib.request).
Issue 25's target: `ycsb-runner render quick` under 0.4 CPU-s; `--help` and `render` load no pandas.

Usage: .venv/bin/python bench/startup_bench.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

COMMANDS = (["--help"], ["render", "quick"], ["findmax", "--help"], ["regress", "--help"])
HEAVY = ("pandas", "numpy", "pymongo", "bson", "jinja2", "urllib.request")
TARGET_CPU_S = 0.4  # render quick
# the same command in-process, then the heavy modules it left in sys.modules
PROBE = (
    "import sys, json\n"
    "from ycsb_runner.cli import main\n"
    "sys.argv = ['ycsb-runner', *json.loads(sys.argv[1])]\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)\n"
)


def timed(argv: list[str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one run of ``ycsb-runner *argv*`` (bytecode caches as they are)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "ycsb_runner", *argv], stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def imported(argv: list[str]) -> list[str]:
    code = PROBE.format(heavy=HEAVY)
    res = subprocess.run(
        [sys.executable, "-c", code, json.dumps(argv)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    return json.loads(res.stderr.decode().strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    timed(["--help"])  # bytecode caches written once
    print(f"{'command':<22} {'CPU-s':>6} {'wall-s':>7}  heavy imports")
    for argv in COMMANDS:
        runs = [timed(argv) for _ in range(args.runs)]
        cpu = statistics.median(c for c, _ in runs)
        wall = statistics.median(w for _, w in runs)
        print(f"{' '.join(argv):<22} {cpu:6.3f} {wall:7.3f}  {', '.join(imported(argv)) or '-'}")
        if argv == ["render", "quick"]:
            verdict = "met" if cpu < TARGET_CPU_S else "NOT met"
            print(f"{'':<22} target: under {TARGET_CPU_S} CPU-s ({verdict})")


if __name__ == "__main__":
    main()

"""Is a Ctrl-C (or a SIGTERM) ever lost while `ycsb-runner` starts? Prints counts (a script, not a test).

Starts ``ycsb-runner parse /dev/stdin`` with a pipe that never gets data (the command loads its libraries,
then waits for input that never comes: only the signal can end it), sends the signal after a delay swept
across the start-up window in fine steps, and waits: a process still alive --wait seconds after the signal
has lost it (it is then killed). For every try: the exit code, the number of stderr lines, a traceback or
not, and whether the last line is the one ``interrupted ...`` line. Issue 52's target: zero lost, every exit
130 (SIGINT) or 143 (SIGTERM), exactly one stderr line starting ``interrupted``.

A lost try is told apart: ``swallowed`` when stderr has Python's "Exception ignored in" (the interrupt was
raised inside a callback, e.g. importlib's module-lock one, and dropped), else ``threads=N`` (how many
threads the process had: a signal the kernel gave to another thread than the main one, blocked in a read,
never wakes it).

Usage: .venv/bin/python bench/signal_bench.py [--cli PATH] [--signal INT|TERM|both] [--tries 300]
       [--max-delay 1.5] [--wait 2] [--json]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

EXPECTED = {"INT": 130, "TERM": 143}


@dataclass(frozen=True)
class Try:
    signal: str
    delay_s: float
    lost: bool
    exit_code: int | None  # None: lost (killed by the bench); negative: died by that signal
    stderr_lines: int
    traceback: bool
    interrupted_line: bool  # stderr is exactly one line, starting "interrupted"
    why_lost: str = ""
    stderr_tail: str = ""  # the end of stderr, for a try that was not one line and the expected exit


def delays(tries: int, max_delay: float) -> list[float]:
    """*tries* delays evenly spread over [0, *max_delay*] (both ends included)."""
    if tries == 1:
        return [0.0]
    return [max_delay * i / (tries - 1) for i in range(tries)]


def _threads(pid: int) -> int:
    try:
        return len(os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return 0


def one_try(cli: str, sig: str, delay: float, wait: float) -> Try:
    """``CLI parse /dev/stdin``, the signal *delay* seconds after the start, up to *wait* seconds to end."""
    signum = getattr(signal, f"SIG{sig}")
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            [cli, "parse", "/dev/stdin"],
            stdin=subprocess.PIPE,  # never written, kept open: the command waits for input
            stdout=subprocess.DEVNULL,
            stderr=err,
            # a bench started in the background ignores SIGINT, and its children would inherit that
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        time.sleep(delay)
        proc.send_signal(signum)
        why = ""
        try:
            code: int | None = proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            code = None
            threads = _threads(proc.pid)
            proc.kill()
            proc.wait()
        assert proc.stdin is not None
        proc.stdin.close()
        err.seek(0)
        text = err.read().decode(errors="replace")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if code is None:
        why = "swallowed" if "Exception ignored in" in text else f"threads={threads}"
    one = len(lines) == 1 and lines[0].startswith("interrupted")
    return Try(
        signal=sig,
        delay_s=round(delay, 4),
        lost=code is None,
        exit_code=code,
        stderr_lines=len(lines),
        traceback="Traceback" in text,
        interrupted_line=one,
        why_lost=why,
        stderr_tail="" if one and code == EXPECTED[sig] else text[-400:],
    )


def summary(results: list[Try]) -> dict[str, object]:
    """The counts of one signal's tries."""
    sig = results[0].signal
    lost = [r for r in results if r.lost]
    return {
        "signal": f"SIG{sig}",
        "tries": len(results),
        "lost": len(lost),
        "lost_at_s": [r.delay_s for r in lost],
        "lost_why": dict(collections.Counter(r.why_lost for r in lost)),
        "exit_codes": dict(sorted(collections.Counter(str(r.exit_code) for r in results).items())),
        "stderr_lines": dict(sorted(collections.Counter(r.stderr_lines for r in results).items())),
        "tracebacks": sum(r.traceback for r in results),
        "one_interrupted_line": sum(r.interrupted_line for r in results),
        f"exit_{EXPECTED[sig]}_and_one_line": sum(
            r.exit_code == EXPECTED[sig] and r.interrupted_line for r in results
        ),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default=str(Path(sys.executable).parent / "ycsb-runner"))
    ap.add_argument("--signal", choices=["INT", "TERM", "both"], default="both")
    ap.add_argument("--tries", type=int, default=300, help="tries per signal")
    ap.add_argument("--max-delay", type=float, default=1.5, help="the latest signal, seconds after the start")
    ap.add_argument("--wait", type=float, default=2.0, help="seconds after the signal before a try is lost")
    ap.add_argument("--json", action="store_true", help="every try, as JSON lines, then the summaries")
    args = ap.parse_args()
    subprocess.run([args.cli, "--version"], stdout=subprocess.DEVNULL, check=True)  # bytecode caches
    for sig in ("INT", "TERM") if args.signal == "both" else (args.signal,):
        results = []
        for delay in delays(args.tries, args.max_delay):
            result = one_try(args.cli, sig, delay, args.wait)
            results.append(result)
            if args.json:
                print(json.dumps(asdict(result)), flush=True)
        print(json.dumps(summary(results)), flush=True)


if __name__ == "__main__":
    main()

"""`make test`'s two pytest sessions, side by side: the main one (unit and integration tests in xdist workers)
at the lowest CPU priority, the tests marked `alone` (they compare the server's speed from night to night)
at the normal one, so that the main session only takes the CPU the nights leave idle.

    python tools/test_sessions.py PYTEST ARGS... -- ARGS...

runs ``PYTEST ARGS...`` (main, ``nice -n 19``) and ``PYTEST ARGS...`` after ``--`` (alone) at once; the alone
session's output goes to a file printed after the main session's, so the two do not interleave. The exit code
is the first non-zero one of (main, alone), else 0. Ctrl-C reaches both (they share this process group);
SIGTERM or SIGHUP to this script is passed on to both as SIGINT, so that each runs its teardown (servers,
temporary folders) before it ends.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile


def main(argv: list[str]) -> int:
    if "--" not in argv:
        print("usage: test_sessions.py PYTEST MAIN_ARGS... -- ALONE_ARGS...", file=sys.stderr)
        return 2
    cut = argv.index("--")
    pytest, main_args, alone_args = argv[0], argv[1:cut], argv[cut + 1 :]
    with tempfile.TemporaryFile("w+") as alone_out:
        procs = [
            subprocess.Popen(["nice", "-n", "19", pytest, *main_args]),
            subprocess.Popen([pytest, *alone_args], stdout=alone_out, stderr=subprocess.STDOUT),
        ]

        def pass_on(_sig: int, _frame: object) -> None:
            for proc in procs:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGINT)

        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, pass_on)
        codes = []
        for proc in procs:
            while True:
                try:
                    code = proc.wait()
                    codes.append(code if code >= 0 else 128 - code)  # killed by signal N: 128 + N
                    break
                except KeyboardInterrupt:  # the terminal's Ctrl-C reached the children too: wait for them
                    continue
        alone_out.seek(0)
        print("\n=== the tests marked `alone` (beside the others, ahead of them) ===", flush=True)
        sys.stdout.write(alone_out.read())
    return next((code for code in codes if code), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

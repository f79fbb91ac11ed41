"""``python -m ycsb_runner`` in a process of its own, for the unit tests that check what a shell sees: the
exit code and the one-line error on stderr; and ``run_main``, the same command in this process, for the
tests that check only what ``cli.main`` makes of it (no signal, no file descriptor, no warning, no
interpreter start-up): ~0.05 s instead of ~0.7 s."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from collections.abc import Mapping

from typer.testing import CliRunner


def run_module(
    *args: str, env: Mapping[str, str] | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m ycsb_runner ARGS``, its stdout and stderr captured as text (the environment: *env*, else
    this process's)."""
    return subprocess.run(
        [sys.executable, "-m", "ycsb_runner", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def run_main(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``ycsb-runner ARGS`` in this process, as ``cli.main`` ends it: an exception the command raised is
    turned into its exit code and its one line on stderr by main's own ``_exit_code`` (*env*: variables set
    on top of this process's environment)."""
    from ycsb_runner.cli import _exit_code, app

    res = CliRunner(env=dict(env) if env else None).invoke(app, list(args))
    stderr, code = res.stderr, res.exit_code
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            code = _exit_code(res.exception)
        stderr += said.getvalue()
    return subprocess.CompletedProcess(["ycsb-runner", *args], code, res.stdout, stderr)

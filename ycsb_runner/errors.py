"""The exceptions the CLI turns into a one-line message and a non-zero exit.

Light on purpose (the built-in ``_signal`` only): ``cli.main`` imports it first, to raise ``Interrupted`` from
its signal handlers, and each module imported before they are in place is a moment a Ctrl-C is a traceback.
"""

from __future__ import annotations

import _signal

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any


class UserError(Exception):
    """A problem the user can fix. ``str(err)`` is a single line that says what to do."""

    exit_code = 2

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class RunFailed(UserError):
    """A run started and did not complete; ``run_dir`` holds what was measured (None before it existed) and
    ``analysis`` its :class:`~ycsb_runner.analyse.analysis.RunAnalysis` when the folder was read back."""

    exit_code = 1

    def __init__(
        self,
        message: str,
        *,
        run_dir: Path | None = None,
        exit_code: int | None = None,
        analysis: Any = None,
    ) -> None:
        super().__init__(message, exit_code=exit_code)
        self.run_dir = run_dir
        self.analysis = analysis


class RunInterrupted(RunFailed):
    """Ctrl-C, SIGTERM or SIGHUP stopped the run after the clean-up; finished steps are kept in ``run_dir``.
    The exit code is 128 + the signal's number (130 INT, 143 TERM, 129 HUP)."""

    exit_code = 130


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, SIGTERM or SIGHUP: the run stops the clean way (YCSB and the server stopped, results kept)."""

    def __init__(self, signum: int = _signal.SIGINT) -> None:
        super().__init__(signum)
        self.signum = int(signum)


def signal_name(exc: BaseException) -> str:
    """SIGINT, SIGTERM or SIGHUP: the signal behind a KeyboardInterrupt (a bare one is Ctrl-C)."""
    import signal

    return signal.Signals(getattr(exc, "signum", signal.SIGINT)).name


def interrupted_exit_code(exc: BaseException) -> int:
    """The conventional exit status after a signal: 128 + its number (130 INT, 143 TERM, 129 HUP)."""
    return 128 + int(getattr(exc, "signum", _signal.SIGINT))


class Stop:
    """The stop signal the command received (``cli.main``'s handlers; None: none) and whether it is on its
    way out (then a second signal ends the process at once)."""

    signum: int | None = None
    leaving = False


def check_stop() -> None:
    """Raise the stop signal received whose KeyboardInterrupt something swallowed (a library's bare
    ``except``): for a wait only the signal can end (``parse``'s read of a pipe)."""
    if Stop.signum is not None and not Stop.leaving:
        raise Interrupted(Stop.signum)

"""The exceptions the CLI turns into a one-line message and a non-zero exit."""

from __future__ import annotations

from pathlib import Path


class UserError(Exception):
    """A problem the user can fix. ``str(err)`` is a single line that says what to do."""

    exit_code = 2

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class RunFailed(UserError):
    """A run started and did not complete; ``run_dir`` holds what was measured (None before it existed)."""

    exit_code = 1

    def __init__(self, message: str, *, run_dir: Path | None = None, exit_code: int | None = None) -> None:
        super().__init__(message, exit_code=exit_code)
        self.run_dir = run_dir


class RunInterrupted(RunFailed):
    """Ctrl-C or a termination signal stopped the run; finished steps are kept in ``run_dir``."""

    exit_code = 130

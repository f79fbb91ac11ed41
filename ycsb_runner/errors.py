"""The one exception type the CLI turns into a one-line message and a non-zero exit."""

from __future__ import annotations


class UserError(Exception):
    """A problem the user can fix. ``str(err)`` is a single line that says what to do."""

    exit_code = 2

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class RunFailed(UserError):
    """A benchmark phase ran but its result cannot be trusted (the parser's verdict said failed)."""

    exit_code = 1

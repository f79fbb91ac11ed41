"""Put the audit configuration back however a run ends."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

from ycsb_runner.audit.base import AuditError, AuditState, AuditStrategy, mask_secrets, one_line


def _shout(stream: TextIO, lines: list[str]) -> None:
    bar = "!" * 78
    print("\n".join([bar, *(mask_secrets(line) for line in lines), bar]), file=stream, flush=True)


@contextmanager
def audit_guard(strategy: AuditStrategy, *, stream: TextIO | None = None) -> Iterator[AuditState]:
    """Record the audit state on entry; restore it on exit (normal, exception, KeyboardInterrupt).

    Yields the entry state. If restoring fails (or is interrupted), prints the manual restore command
    to stderr and raises AuditError, chained to whatever ended the block.
    """
    out = stream or sys.stderr
    entry = strategy.status()
    try:
        yield entry
    finally:
        _restore(strategy, entry, out)


def _restore(strategy: AuditStrategy, entry: AuditState, out: TextIO) -> None:
    hint = strategy.manual_restore_hint(entry)
    if entry.enabled is None:
        _shout(
            out,
            [
                f"AUDIT STATE UNKNOWN: {strategy.name} could not read the audit state before the run "
                f"({entry.detail}), so it was not restored.",
                f"Check it and, if needed, run: {hint}",
            ],
        )
        return
    try:
        strategy.restore(entry)
    except (Exception, KeyboardInterrupt) as exc:
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else one_line(str(exc))
        _shout(
            out,
            [
                f"AUDIT NOT RESTORED: {strategy.name} could not put auditing back to "
                f"{entry.describe()}: {reason}",
                "Restore it by hand with:",
                f"    {hint}",
            ],
        )
        raise AuditError(f"audit was not restored ({strategy.name}); run: {hint}") from exc

"""Put the audit configuration back however a run ends."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from ycsb_runner.audit.base import AuditError, AuditState, AuditStrategy, one_line
from ycsb_runner.safe.secrets import mask_url


def _shout(stream: TextIO, lines: list[str]) -> None:
    bar = "!" * 78
    print("\n".join([bar, *(mask_url(line) for line in lines), bar]), file=stream, flush=True)


@contextmanager
def audit_guard(
    strategy: AuditStrategy, *, stream: TextIO | None = None, restore_file: Path | None = None
) -> Iterator[AuditState]:
    """Record the audit state on entry; restore it on exit (normal, exception, KeyboardInterrupt).

    Before anything is switched: refuses (AuditError) when the entry state could not be restored, writes
    ``restore_file`` (the exact way back, for ``ycsb-runner audit restore RUN_DIR`` after a SIGKILL) and
    says where it is, and warns when the setting outlives the run (cluster-wide, persistent).
    Yields the entry state. If restoring fails (or is interrupted), prints the manual restore command
    to stderr and raises AuditError, chained to whatever ended the block.
    """
    out = stream or sys.stderr
    entry = strategy.status()
    strategy.check_restorable(entry)
    if restore_file is not None:
        from ycsb_runner.audit.restore_file import restore_document, write_restore_file

        write_restore_file(restore_file, restore_document(strategy, entry))
        print(
            f"audit: starting state {entry.describe()}; restore file: {restore_file} "
            f"(after a crash: ycsb-runner audit restore {restore_file.parent})",
            file=out,
            flush=True,
        )
    note = strategy.persistence_note()
    if note:
        print(f"audit: WARNING: {note}", file=out, flush=True)
    restored = False
    try:
        yield entry
    finally:
        try:
            _restore(strategy, entry, out)
            restored = True
        finally:
            if restore_file is not None:
                from ycsb_runner.audit.restore_file import mark

                mark(restore_file, "restored" if restored else "not-restored")


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

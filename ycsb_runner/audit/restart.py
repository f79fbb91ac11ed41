"""``restart``: audit on/off by restarting the server with or without ``auditLog`` (the caller restarts)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ycsb_runner.audit.base import BASELINE_RESTART, AuditError, AuditState, AuditStrategy, normalize_ops
from ycsb_runner.errors import UserError

RestartFn = Callable[[bool, frozenset[str]], Any]
StatusFn = Callable[[], "AuditState | bool | None"]


class RestartStrategy(AuditStrategy):
    """Delegate to ``restart(with_audit, ops)`` and ``status()`` callables supplied by the caller.

    ``status`` may return an AuditState, or a bool / None (on / off / unknown). ``hint`` is the text shown
    when a restore fails (e.g. the command line that starts the server as it was).
    """

    name = "restart"
    baseline = BASELINE_RESTART

    def __init__(self, restart: RestartFn, status: StatusFn, *, hint: str | None = None) -> None:
        if not callable(restart) or not callable(status):
            raise UserError("the restart strategy needs restart(with_audit, ops) and status() callables")
        self._restart = restart
        self._status = status
        self._hint = hint

    def status(self) -> AuditState:
        got = self._status()
        if isinstance(got, AuditState):
            return got
        if got is None or isinstance(got, bool):
            return AuditState(got, frozenset(), "reported by the restart hook")
        raise AuditError(f"restart strategy: status() returned {type(got).__name__}, not bool/AuditState")

    def _call(self, with_audit: bool, ops: frozenset[str]) -> None:
        try:
            self._restart(with_audit, ops)
        except UserError:
            raise
        except Exception as exc:  # the hook is the caller's code: report it as one line
            raise AuditError(
                f"restart strategy: restarting the server with audit "
                f"{'on' if with_audit else 'off'} failed: {type(exc).__name__}: {exc}"
            ) from exc

    def enable(self, ops: Iterable[str]) -> AuditState:
        wanted = normalize_ops(ops)
        self._call(True, wanted)
        return self.verify(True, wanted)

    def disable(self) -> AuditState:
        self._call(False, frozenset())
        return self.verify(False)

    def restore(self, state: AuditState) -> AuditState:
        if state.enabled is None:
            raise AuditError(f"{self.name}: the state to restore is unknown ({state.detail})")
        current = self.status()
        if current.enabled == state.enabled and (not state.enabled or current.ops == state.ops):
            return current
        return self.enable(state.ops) if state.enabled else self.disable()

    def manual_restore_hint(self, state: AuditState) -> str:
        if self._hint:
            return self._hint
        ops = ",".join(sorted(state.ops)) or "the ops it had"
        how = f"with auditLog (auditing {ops})" if state.enabled else "without auditLog"
        return f"restart the server {how}, as it was started before the run"

"""``restart``: audit on/off by restarting the server with or without ``auditLog`` (the caller restarts)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ycsb_runner.audit.base import BASELINE_RESTART, AuditError, AuditState, AuditStrategy, normalize_ops
from ycsb_runner.audit.registry import StrategySpec, register_strategy
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


def with_embedded_server(holder: Any, options: dict[str, Any]) -> dict[str, Any]:
    """The ``restart`` strategy on the embedded server: restart it with ``on_args`` for "on" and
    ``off_args`` for "off" (e.g. mongod's --auditDestination ... flags); status = which args it runs with.
    *holder*: the embedded server (``embedded.EmbeddedServer``: its ``.info`` follows its ``restart_with``;
    ``.info`` is None with MONGODB_URL)."""
    if holder.info is None:
        raise UserError(
            "the restart strategy restarts the embedded server: run without MONGODB_URL, or use "
            "the command strategy with your own restart commands"
        )
    on_args = [str(a) for a in options.get("on_args", [])]
    off_args = [str(a) for a in options.get("off_args", [])]
    if not on_args:
        raise UserError(
            "the restart strategy needs --audit-option on_args='[...]' (server arguments for audit on)"
        )

    audited: set[str] = set()  # the ops the last "on" restart was for: on_args audit what they audit

    def restart(with_audit: bool, ops: Any) -> None:
        holder.restart_with(on_args if with_audit else off_args)
        audited.clear()
        if with_audit:
            audited.update(ops)

    def status() -> AuditState:
        assert holder.info is not None
        argv = holder.info.argv
        n = len(on_args)
        on = any(argv[i : i + n] == on_args for i in range(len(argv) - n + 1))
        return AuditState(
            enabled=on,
            ops=frozenset(audited) if on else frozenset(),
            detail=f"server argv: {' '.join(argv[1:])}",
            raw={},
        )

    return {**options, "restart": restart, "status": status}


def _make(opts: dict[str, Any], client: Any) -> AuditStrategy:
    if "restart" not in opts or "status" not in opts:
        raise UserError(
            "the restart strategy is driven by the suite runner (it restarts the server), "
            "not usable from the command line; use mongodb-runtime or command"
        )
    return RestartStrategy(opts["restart"], opts["status"], hint=opts.get("hint"))


def _preflight(options: dict[str, Any], embedded: bool) -> list[str]:
    opt = "--audit-option"
    errors: list[str] = []
    if not embedded:
        errors.append(
            "--audit-strategy restart restarts the embedded server: run without MONGODB_URL, or use "
            "--audit-strategy command with your own restart commands"
        )
    on_args, off_args = options.get("on_args"), options.get("off_args", [])
    if not (isinstance(on_args, list) and on_args):
        errors.append(
            f"--audit-strategy restart needs {opt} on_args='[\"--flag\", ...]' (the server's arguments "
            "with audit on; off_args for audit off)"
        )
    if not isinstance(off_args, list):
        errors.append(f"{opt} off_args: give a JSON list of server arguments, e.g. off_args='[]'")
    return errors


register_strategy(
    StrategySpec(
        name="restart",
        help="bench restarts the embedded server with on_args/off_args (not from `audit`).",
        make=_make,
        preflight=_preflight,
        with_server=with_embedded_server,
        unverified="the `restart` strategy restarted the server with other arguments",
    )
)

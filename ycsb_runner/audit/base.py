"""The interface every audit-logging strategy implements, plus the YCSB-op helpers they share."""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ycsb_runner.errors import UserError
from ycsb_runner.operations import OP_NAMES
from ycsb_runner.safe.secrets import mask_url

#: The operation names YCSB 0.17.0's CoreWorkload uses (its *proportion properties), from the one list.
YCSB_OPS: tuple[str, ...] = OP_NAMES

#: MongoDB commands each YCSB op sends through the 0.17.0 mongodb binding. A scan is a find whose cursor
#: may need getMore; a read is a find with limit 1 (one batch, never a getMore).
OP_COMMANDS: dict[str, tuple[str, ...]] = {
    "read": ("find",),
    "scan": ("find", "getMore"),
    "update": ("update",),
    "insert": ("insert",),
    "delete": ("delete",),
    "readmodifywrite": ("find", "update"),
}

#: With ``mongodb.upsert=true`` the binding inserts with ``replaceOne(upsert)`` (or a bulk of upserting
#: ReplaceOneModels when batchsize > 1): those reach the server as ``update`` commands, not ``insert``.
UPSERT_OP_COMMANDS: dict[str, tuple[str, ...]] = {**OP_COMMANDS, "insert": ("update",)}

#: The operation categories cloud audit services filter on (Alibaba "insert,query,update"; Tencent SqlType).
OP_CATEGORIES: dict[str, tuple[str, ...]] = {
    "read": ("query",),
    "scan": ("query",),
    "update": ("update",),
    "insert": ("insert",),
    "delete": ("delete",),
    "readmodifywrite": ("query", "update"),
}
UPSERT_OP_CATEGORIES: dict[str, tuple[str, ...]] = {**OP_CATEGORIES, "insert": ("update",)}


def op_commands(upsert: bool = False) -> dict[str, tuple[str, ...]]:
    """YCSB op -> the server commands the binding sends for it, given ``mongodb.upsert``. Pure."""
    return UPSERT_OP_COMMANDS if upsert else OP_COMMANDS


def op_categories(upsert: bool = False) -> dict[str, tuple[str, ...]]:
    """YCSB op -> cloud audit categories, given ``mongodb.upsert``. Pure."""
    return UPSERT_OP_CATEGORIES if upsert else OP_CATEGORIES


class AuditError(UserError):
    """Auditing is not in the state it must be in (or could not be switched / restored)."""


@dataclass(frozen=True)
class AuditState:
    """What a strategy read back from the server or service.

    ``enabled`` is None when the state cannot be told. ``ops`` are the YCSB ops whose operations are
    audited. ``detail`` is for humans and never holds a secret; ``raw`` is what the strategy needs to put
    this exact state back (strategy-specific).
    """

    enabled: bool | None
    ops: frozenset[str] = frozenset()
    detail: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    #: Per node of the deployment, what it reported (``node``, ``role``, ``state``, ``verified`` ...):
    #: recorded in the audit step's record. Empty for strategies that see one service.
    nodes: tuple[dict[str, Any], ...] = field(default=(), compare=False)

    def describe(self) -> str:
        """One line: ``on (insert,read) - detail``."""
        word = {True: "on", False: "off", None: "unknown"}[self.enabled]
        ops = f" (ops: {','.join(sorted(self.ops))})" if self.enabled and self.ops else ""
        return f"{word}{ops}" + (f" - {self.detail}" if self.detail else "")


#: What "audit off" measured, per strategy: the baseline an overhead is relative to. An "off" that keeps
#: the audit subsystem running (a filter matching nothing) is not the same baseline as a server without
#: ``auditLog`` at all; a study whose baseline is "audit disabled" needs the restart strategy.
BASELINE_RUNTIME_FILTER = (
    "audit: off = runtime filter that matches nothing (auditAuthorizationSuccess false; the audit "
    "subsystem keeps running)"
)
BASELINE_RUNTIME_PARAMETER = (
    "audit: off = auditAuthorizationSuccess false (setParameter; the startup filter stays, the audit "
    "subsystem keeps running)"
)
BASELINE_RESTART = "audit disabled = restart without auditLog"
BASELINE_COMMAND = "audit: off = what the user's off command does (not known to ycsb-runner)"
BASELINE_CLOUD = "audit disabled = the cloud audit service switched off ({how})"


class AuditStrategy(ABC):
    """Turns auditing of YCSB's operations on and off, reads it back and puts the original state back."""

    name: str = ""
    #: The binding's ``mongodb.upsert``: inserts then reach the server as updates (set by the runner).
    upsert: bool = False
    #: The baseline "off" measures (one of the BASELINE_* lines); recorded in the manifest and report.
    baseline: str = ""

    @abstractmethod
    def status(self) -> AuditState:
        """Read the current state (no change)."""

    @abstractmethod
    def enable(self, ops: Iterable[str]) -> AuditState:
        """Audit the given YCSB ops; returns the verified state."""

    @abstractmethod
    def disable(self) -> AuditState:
        """Stop auditing YCSB's operations; returns the verified state."""

    @abstractmethod
    def restore(self, state: AuditState) -> AuditState:
        """Put back a state returned by :meth:`status` earlier; returns the verified state."""

    @abstractmethod
    def manual_restore_hint(self, state: AuditState) -> str:
        """The exact command a human would run to put ``state`` back (passwords masked)."""

    def check_restorable(self, entry: AuditState) -> None:
        """Raise AuditError, before anything is switched, when ``entry`` could not be put back."""
        return None

    def persistence_note(self) -> str:
        """What a switch changes beyond this run (shown before the first switch); '' when nothing."""
        return ""

    def restore_options(self) -> dict[str, Any] | None:
        """JSON-safe, secret-free options that rebuild this strategy in another process
        (``ycsb-runner audit restore``); None when that is not possible."""
        return None

    def verify(self, expected_on: bool, ops: Iterable[str] = ()) -> AuditState:
        """Read the state back; raise AuditError unless it is on (covering ``ops``) or off as expected."""
        state = self.status()
        problem = mismatch(state, expected_on, ops)
        if problem:
            raise AuditError(f"{self.name}: audit should be {'on' if expected_on else 'off'} but {problem}")
        return state


def mismatch(state: AuditState, expected_on: bool, ops: Iterable[str] = ()) -> str:
    """Why ``state`` is not the expected one ('' when it is). Pure."""
    if state.enabled is None:
        return f"its state cannot be read ({state.detail or 'no detail'})"
    if state.enabled != expected_on:
        return f"it is {'on' if state.enabled else 'off'} ({state.detail or 'no detail'})"
    if expected_on:
        missing = sorted(normalize_ops(ops) - state.ops)
        if missing:
            return f"it does not audit {','.join(missing)} ({state.detail or 'no detail'})"
    return ""


def wait_for(
    read: Callable[[], AuditState],
    expected_on: bool,
    ops: Iterable[str],
    *,
    timeout_s: float,
    interval_s: float,
) -> tuple[AuditState, str]:
    """Poll ``read`` until the state matches (cloud switches take a while). Returns (state, problem)."""
    wanted = normalize_ops(ops)
    deadline = time.monotonic() + timeout_s
    while True:
        state = read()
        problem = mismatch(state, expected_on, wanted)
        if not problem or time.monotonic() >= deadline:
            return state, problem
        time.sleep(interval_s)


def settle(
    read: Callable[[], AuditState],
    name: str,
    expected_on: bool,
    ops: Iterable[str],
    *,
    timeout_s: float,
    interval_s: float,
) -> AuditState:
    """``wait_for`` that raises AuditError when the state never matches (the cloud strategies' verify)."""
    state, problem = wait_for(read, expected_on, ops, timeout_s=timeout_s, interval_s=interval_s)
    if problem:
        raise AuditError(
            f"{name}: audit should be {'on' if expected_on else 'off'} after {timeout_s:g}s but {problem}"
        )
    return state


def normalize_ops(ops: Iterable[str] | str) -> frozenset[str]:
    """``"insert, Read"`` or an iterable -> frozenset of known YCSB op names; UserError on unknown names."""
    items = ops.split(",") if isinstance(ops, str) else list(ops)
    names = frozenset(o.strip().lower() for o in items if o and o.strip())
    unknown = sorted(names - set(YCSB_OPS))
    if unknown:
        raise UserError(f"unknown YCSB operation(s) {','.join(unknown)}: use {','.join(YCSB_OPS)}")
    return names


def ops_to_commands(ops: Iterable[str], *, upsert: bool = False) -> tuple[str, ...]:
    """YCSB ops -> the sorted, de-duplicated MongoDB command names they send. Pure."""
    table = op_commands(upsert)
    return tuple(sorted({cmd for op in normalize_ops(ops) for cmd in table[op]}))


def commands_to_ops(commands: Iterable[str] | None, *, upsert: bool = False) -> frozenset[str]:
    """The YCSB ops whose commands are all in ``commands`` (None means every command). Pure."""
    if commands is None:
        return frozenset(YCSB_OPS)
    have = set(commands)
    return frozenset(op for op, cmds in op_commands(upsert).items() if set(cmds) <= have)


def ops_to_categories(ops: Iterable[str], *, upsert: bool = False) -> tuple[str, ...]:
    """YCSB ops -> sorted cloud audit categories (query/insert/update/delete). Pure."""
    table = op_categories(upsert)
    return tuple(sorted({cat for op in normalize_ops(ops) for cat in table[op]}))


def categories_to_ops(categories: Iterable[str], *, upsert: bool = False) -> frozenset[str]:
    """The YCSB ops whose categories are all in ``categories``. Pure."""
    have = {c.strip().lower() for c in categories if c and c.strip()}
    return frozenset(op for op, cats in op_categories(upsert).items() if set(cats) <= have)


_FLAG_PASSWORD = re.compile(r"(?i)^(?P<flag>--?[\w-]*(password|passwd|secret|token)[\w-]*=)(?P<pw>.+)$")
_SECRET_FLAGS = re.compile(r"(?i)^--?[\w-]*(password|passwd|secret|token)[\w-]*$|^-p$")


def one_line(text: str, limit: int = 400) -> str:
    """Collapse whitespace, mask URL passwords and cut to ``limit`` characters. Pure."""
    flat = " ".join(mask_url(str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def mask_argv(argv: Iterable[str]) -> list[str]:
    """Mask URL passwords and the values of ``--password x`` / ``--password=x`` / ``-p x``. Pure."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append("***")
            hide_next = False
            continue
        flag = _FLAG_PASSWORD.match(arg)
        if flag:
            out.append(f"{flag.group('flag')}***")
            continue
        hide_next = bool(_SECRET_FLAGS.match(arg))
        out.append(mask_url(arg))
    return out

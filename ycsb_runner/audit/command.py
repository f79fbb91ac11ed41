"""``command``: user-given programs turn auditing on/off and report it (no shell involved)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from collections.abc import Iterable, Sequence
from typing import Any

from ycsb_runner.audit.base import (
    BASELINE_COMMAND,
    AuditError,
    AuditState,
    AuditStrategy,
    mask_argv,
    normalize_ops,
)
from ycsb_runner.audit.registry import RestoreRequest, StrategySpec, register_strategy
from ycsb_runner.errors import UserError
from ycsb_runner.safe.secrets import mask_url

DEFAULT_ON_REGEX = r"\bon\b|enabled|true"


def parse_argv(value: str | Sequence[str] | None, what: str) -> list[str] | None:
    """A JSON argv list (``'["prog", "--on"]'``), a shlex string or a list -> argv list. Pure."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                argv = json.loads(text)
            except ValueError as exc:
                raise UserError(f"{what}: not a JSON list of strings ({exc.msg})") from None
        else:
            try:
                argv = shlex.split(text)
            except ValueError as exc:
                raise UserError(f"{what}: cannot split {mask_url(text)!r} ({exc})") from None
    else:
        argv = list(value)
    if not argv or not all(isinstance(a, str) for a in argv):
        raise UserError(f"{what}: give a non-empty list of strings (program first)")
    return argv


def substitute(argv: Sequence[str], ops: Iterable[str]) -> list[str]:
    """Replace ``{ops}`` in each argv item by the comma list of audited ops (sorted). Pure."""
    text = ",".join(sorted(ops))
    return [a.replace("{ops}", text) for a in argv]


def _tail(text: str, lines: int = 5, chars: int = 400) -> str:
    tail = mask_url(" | ".join(line for line in text.strip().splitlines()[-lines:] if line.strip()))
    return tail[-chars:]


class CommandStrategy(AuditStrategy):
    """Run the user's ``on``/``off``/``status`` programs; the status program's stdout decides the state."""

    name = "command"
    baseline = BASELINE_COMMAND

    def __init__(
        self,
        on_cmd: str | Sequence[str] | None,
        off_cmd: str | Sequence[str] | None,
        status_cmd: str | Sequence[str] | None,
        *,
        on_regex: str = DEFAULT_ON_REGEX,
        timeout_s: float = 120.0,
        cwd: str | None = None,
    ) -> None:
        on, off, stat = (
            parse_argv(on_cmd, "--on-cmd"),
            parse_argv(off_cmd, "--off-cmd"),
            parse_argv(status_cmd, "--status-cmd"),
        )
        if stat is None:
            raise UserError(
                "the command strategy needs a status program: --status-cmd, or status_cmd in the suite's "
                "[audit.options] (and on/off programs to switch: --on-cmd/--off-cmd, on_cmd/off_cmd)"
            )
        self.on_cmd, self.off_cmd, self.status_cmd = on, off, stat
        try:
            self.on_regex = re.compile(on_regex, re.IGNORECASE)
        except re.error as exc:
            raise UserError(f"--on-regex {on_regex!r} is not a regular expression ({exc})") from None
        if timeout_s <= 0:
            raise UserError("the command timeout must be positive")
        self.timeout_s = timeout_s
        self.cwd = cwd
        self._ops: frozenset[str] = frozenset()

    def _run(self, argv: Sequence[str], what: str) -> str:
        shown = shlex.join(mask_argv(argv))
        try:
            done = subprocess.run(
                list(argv),
                capture_output=True,
                text=True,
                timeout=self.timeout_s,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except FileNotFoundError:
            raise AuditError(f"audit {what} command not found: {shown}") from None
        except PermissionError:
            raise AuditError(f"audit {what} command is not executable: {shown}") from None
        except subprocess.TimeoutExpired as exc:
            err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else exc.stderr or ""
            raise AuditError(
                f"audit {what} command timed out after {self.timeout_s:g}s: {shown}"
                + (f": {_tail(err)}" if err else "")
            ) from None
        if done.returncode != 0:
            raise AuditError(
                f"audit {what} command failed (exit {done.returncode}): {shown}: "
                f"{_tail(done.stderr) or _tail(done.stdout) or 'no output'}"
            )
        return done.stdout

    def _state(self, ops: frozenset[str]) -> AuditState:
        out = self._run(substitute(self.status_cmd, ops), "status")
        on = bool(self.on_regex.search(out))
        detail = f"status command said {_tail(out, lines=1, chars=120)!r}"
        return AuditState(on, ops if on else frozenset(), detail, {"stdout": out[-2000:], "ops": sorted(ops)})

    def status(self) -> AuditState:
        return self._state(self._ops)

    def _argv(self, on: bool) -> list[str]:
        argv = self.on_cmd if on else self.off_cmd
        if argv is None:
            raise UserError(
                f"the command strategy needs --{'on' if on else 'off'}-cmd to switch audit "
                f"{'on' if on else 'off'}"
            )
        return argv

    def enable(self, ops: Iterable[str]) -> AuditState:
        wanted = normalize_ops(ops)
        self._run(substitute(self._argv(True), wanted), "on")
        self._ops = wanted
        return self.verify(True, wanted)

    def disable(self) -> AuditState:
        self._run(substitute(self._argv(False), self._ops), "off")
        return self.verify(False)

    def restore(self, state: AuditState) -> AuditState:
        if state.enabled is None:
            raise AuditError(f"{self.name}: the state to restore is unknown ({state.detail})")
        current = self.status()
        if current.enabled == state.enabled:
            return current
        if state.enabled:
            return self.enable(state.ops or self._ops)
        return self.disable()

    def manual_restore_hint(self, state: AuditState) -> str:
        argv = self.on_cmd if state.enabled else self.off_cmd
        if argv is None:
            word = "on" if state.enabled else "off"
            return f"(no --{word}-cmd given) switch audit {word} by hand"
        return shlex.join(mask_argv(substitute(argv, state.ops or self._ops)))

    def restore_options(self) -> dict[str, Any]:
        """The programs (secret values masked: pass --on-cmd/--off-cmd to ``audit restore`` then)."""

        def shown(argv: Sequence[str] | None) -> list[str] | None:
            return None if argv is None else mask_argv(argv)

        return {
            "on_cmd": shown(self.on_cmd),
            "off_cmd": shown(self.off_cmd),
            "status_cmd": shown(self.status_cmd),
            "on_regex": self.on_regex.pattern,
            "timeout_s": self.timeout_s,
            "cwd": self.cwd,
            "ops": sorted(self._ops),
        }

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> CommandStrategy:
        return cls(
            options.get("on_cmd"),
            options.get("off_cmd"),
            options.get("status_cmd"),
            on_regex=options.get("on_regex") or DEFAULT_ON_REGEX,
            timeout_s=float(options.get("timeout_s") or 120.0),
            cwd=options.get("cwd"),
        )


COMMAND_KEYS = ("on_cmd", "off_cmd", "status_cmd")


def describe_commands(options: dict[str, Any]) -> list[str]:
    """The programs the command strategy would run, one ``key: argv`` each (secrets masked). Pure; a value
    that is not an argv is shown as given (the strategy refuses it before anything runs)."""
    out = []
    for key in COMMAND_KEYS:
        value = options.get(key)
        if value is None:
            continue
        try:
            argv = parse_argv(value, key)
        except UserError:
            out.append(f"{key}: {mask_url(str(value))!r}")
            continue
        assert argv is not None
        out.append(f"{key}: {shlex.join(mask_argv(argv))}")
    return out


def _is_argv(value: object) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    return isinstance(value, list) and bool(value) and all(isinstance(a, str) and a for a in value)


def _preflight(options: dict[str, Any], embedded: bool) -> list[str]:
    missing = [k for k in COMMAND_KEYS if not _is_argv(options.get(k))]
    if not missing:
        return []
    return [
        f"--audit-strategy command needs {', '.join(f'--audit-option {k}=...' for k in missing)} "
        '(each a JSON list like \'["./audit.sh", "on"]\')'
    ]


def _restore(request: RestoreRequest) -> dict[str, Any]:
    """The options for ``audit restore``: the programs only from this command line (a run folder may come
    from anywhere, so nothing in it is run), the file's non-program settings kept."""
    path, saved, given = request.path, request.saved, request.given
    programs = {k: given[k] for k in ("status_cmd", "on_cmd", "off_cmd")}
    needed = ["status_cmd", "on_cmd" if request.entry.enabled else "off_cmd"]
    missing = [k for k in needed if programs[k] is None]
    if missing:
        used = " ".join(
            f"--{k.replace('_', '-')} {shlex.quote(json.dumps(saved[k]))}"
            for k in needed
            if isinstance(saved.get(k), list)
        )
        raise UserError(
            f"{path}: audit restore never runs programs found in a run folder: pass "
            + " and ".join(f"--{k.replace('_', '-')}" for k in missing)
            + (f" (the run used {used})" if used else "")
        )
    options: dict[str, Any] = {k: v for k, v in programs.items() if v is not None}
    if isinstance(saved.get("on_regex"), str):
        options["on_regex"] = saved["on_regex"]
    if isinstance(saved.get("timeout_s"), int | float) and not isinstance(saved["timeout_s"], bool):
        options["timeout_s"] = saved["timeout_s"]
    if given["timeout"]:
        options["timeout_s"] = given["timeout"]
    return options


register_strategy(
    StrategySpec(
        name="command",
        help="your own programs switch and report auditing (--on-cmd, --off-cmd, --status-cmd).",
        make=lambda opts, client: CommandStrategy.from_options(opts),
        cli_options=lambda given: {
            "on_cmd": given["on_cmd"],
            "off_cmd": given["off_cmd"],
            "status_cmd": given["status_cmd"],
            "on_regex": given["on_regex"],
            "timeout_s": given["timeout"] or 120.0,
        },
        preflight=_preflight,
        restore=_restore,
        programs=describe_commands,
        program_keys=COMMAND_KEYS,
        unverified="the `command` strategy ran your own on/off/status commands",
    )
)

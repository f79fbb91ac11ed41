"""The crash-safe restore file: the audit state before the first switch, written into the run folder.

``audit_guard`` writes it before anything is switched, so that a runner killed with SIGKILL (no
``finally`` runs) still leaves the exact way back: the starting state, the commands that restore it
(``mongosh ... --eval 'db.adminCommand(EJSON.parse("..."))'``), and the secret-free options that let
``ycsb-runner audit restore RUN_DIR`` rebuild the strategy and put the state back. Passwords are never
written (connection strings are masked; pass the real one to ``audit restore``).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bson import json_util

from ycsb_runner.audit.base import AuditState, AuditStrategy
from ycsb_runner.errors import UserError
from ycsb_runner.safe.secrets import mask_url

FILE_NAME = "audit-restore.json"
FORMAT = "ycsb-runner-audit-restore/1"
_EJSON = json_util.JSONOptions(json_mode=json_util.JSONMode.CANONICAL, tz_aware=True)


def restore_path(run_dir: Path) -> Path:
    return Path(run_dir) / FILE_NAME


def restore_document(strategy: AuditStrategy, entry: AuditState) -> dict[str, Any]:
    """What the restore file holds (JSON-safe: ``entry.raw`` as canonical extended JSON). Pure."""
    commands = []
    restore_commands = getattr(strategy, "restore_commands", None)
    if callable(restore_commands):
        from ycsb_runner.audit.mongodb_runtime import hint_command

        for url, command in restore_commands(entry):
            commands.append(
                {
                    "connection": mask_url(url),
                    "command": json.loads(json_util.dumps(command, json_options=_EJSON)),
                    "mongosh": hint_command(url, command),
                }
            )
    return {
        "format": FORMAT,
        "status": "pending",
        "strategy": strategy.name,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "warning": strategy.persistence_note(),
        "entry_state": {
            "enabled": entry.enabled,
            "ops": sorted(entry.ops),
            "detail": mask_url(entry.detail),
            "raw": json.loads(json_util.dumps(entry.raw, json_options=_EJSON)),
            "nodes": [dict(n) for n in entry.nodes],
        },
        "options": strategy.restore_options(),
        "manual_restore": strategy.manual_restore_hint(entry),
        "commands": commands,
        "upsert": bool(strategy.upsert),
    }


def write_restore_file(path: Path, document: dict[str, Any]) -> None:
    """Write atomically and durably (temp file, fsync, rename): a kill never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(document, fh, indent=2, sort_keys=False)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def mark(path: Path, status: str, note: str = "") -> None:
    """Set ``status`` (restored / not-restored) in an existing restore file."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    document["status"] = status
    document[f"{status.replace('-', '_')}_at"] = datetime.now(UTC).isoformat(timespec="seconds")
    if note:
        document["note"] = mask_url(note)
    write_restore_file(path, document)


def load_restore_file(run_dir: Path) -> tuple[Path, dict[str, Any], AuditState]:
    """The restore file of a run folder (or the file itself) -> (path, document, entry state)."""
    path = Path(run_dir)
    if path.is_dir():
        path = restore_path(path)
    if not path.is_file():
        raise UserError(f"no audit restore file at {path}: pass the run folder the runner printed")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the audit restore file {path}: {exc}") from None
    if not isinstance(document, dict):
        raise UserError(f"{path} is damaged: not a JSON object; restore audit logging by hand")
    if document.get("format") != FORMAT:
        raise UserError(f"{path} is not a ycsb-runner audit restore file (format {document.get('format')!r})")
    entry = document.get("entry_state") or {}
    _check_entry_shape(path, document, entry)
    try:
        raw = json_util.loads(json.dumps(entry.get("raw") or {}), json_options=_EJSON)
    except (ValueError, TypeError) as exc:
        raise UserError(f"{path} is damaged: entry_state.raw: {str(exc)[:100]}") from None
    state = AuditState(
        enabled=entry.get("enabled"),
        ops=frozenset(entry.get("ops") or ()),
        detail=str(entry.get("detail") or ""),
        raw=dict(raw),
        nodes=tuple(entry.get("nodes") or ()),
    )
    return path, document, state


def _check_entry_shape(path: Path, document: dict[str, Any], entry: Any) -> None:
    """UserError naming the first part of the restore file whose JSON type is not the one written."""
    shapes = (("entry_state", entry, dict), ("options", document.get("options") or {}, dict))
    for key, value, kind in shapes:
        if not isinstance(value, kind):
            raise UserError(f"{path} is damaged: {key} is not a JSON object; restore audit logging by hand")
    for key, kind in (("ops", list), ("nodes", list), ("raw", dict)):
        if entry.get(key) is not None and not isinstance(entry[key], kind):
            raise UserError(f"{path} is damaged: entry_state.{key} is not a JSON {kind.__name__}")
    for key, kind in (("ops", str), ("nodes", dict)):
        if not all(isinstance(item, kind) for item in entry.get(key) or ()):
            raise UserError(f"{path} is damaged: entry_state.{key} holds a value of the wrong type")
    if entry.get("enabled") not in (True, False, None):
        raise UserError(f"{path} is damaged: entry_state.enabled is not true, false or null")

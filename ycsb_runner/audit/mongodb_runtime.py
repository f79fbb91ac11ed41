"""``mongodb-runtime``: switch what a running MongoDB Enterprise / Percona server audits, over the wire.

The audit subsystem itself can only be turned on at startup (``auditLog.destination``). At runtime we
change what it records: the filter plus ``auditAuthorizationSuccess`` (CRUD shows up only as successful
``authCheck`` events). The command depends on the server:

* 7.1+ with ``auditLog.runtimeConfiguration``: ``setClusterParameter {auditConfig: ...}`` (replica set or
  mongos only);
* 5.0-7.0 with ``runtimeConfiguration``: ``setAuditConfig``;
* older servers, servers without runtime configuration, and Percona: ``setParameter
  auditAuthorizationSuccess`` (the filter stays what the server was started with).

"Off" is a filter that matches nothing plus ``auditAuthorizationSuccess: false``; never ``{}`` (which
audits everything). Every command document is built by a pure function below.
"""

from __future__ import annotations

import enum
import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bson import json_util

from ycsb_runner.audit.base import (
    YCSB_OPS,
    AuditError,
    AuditState,
    AuditStrategy,
    commands_to_ops,
    mask_secrets,
    mismatch,
    normalize_ops,
    one_line,
    ops_to_commands,
)
from ycsb_runner.errors import UserError

#: The "off" filter: an atype no event ever has. Never use ``{}`` for off: it audits everything.
NONE_FILTER: dict[str, Any] = {"atype": "__ycsb_runner_none__"}


class ServerKind(enum.StrEnum):
    ENTERPRISE = "MongoDB Enterprise"
    PERCONA = "Percona Server for MongoDB"
    COMMUNITY = "MongoDB Community"
    FERRETDB = "FerretDB"


class Mode(enum.StrEnum):
    """Which runtime command switches the audit configuration."""

    CLUSTER_PARAMETER = "setClusterParameter"
    AUDIT_CONFIG = "setAuditConfig"
    PARAMETER = "setParameter"


@dataclass(frozen=True)
class ServerInfo:
    """What buildInfo / getCmdLineOpts / hello told us. ``audit_log`` is None when it could not be read."""

    kind: ServerKind
    version: str
    audit_log: Mapping[str, Any] | None
    topology: str  # standalone | replicaset | mongos | unknown

    @property
    def label(self) -> str:
        return f"{self.kind} {self.version}"

    @property
    def runtime_config(self) -> bool | None:
        """``auditLog.runtimeConfiguration`` as started (None: unknown)."""
        if self.audit_log is None:
            return None
        return _truthy(self.audit_log.get("runtimeConfiguration"))


@dataclass(frozen=True)
class FilterInfo:
    """What an audit filter lets through, as far as we can tell without evaluating it."""

    commands: frozenset[str] | None  # authCheck commands admitted; None = every command
    namespace: str | None
    exact: bool  # False: the filter has clauses we did not analyse


# ---------------------------------------------------------------- pure: detection and command documents


def parse_version(version: str) -> tuple[int, int, int]:
    """``"7.0.23"``, ``"6.0.12-9"``, ``"8.0.0-rc3"`` -> (major, minor, patch). Pure."""
    match = re.match(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?", str(version))
    if not match:
        raise UserError(f"cannot read the server version {version!r}")
    return int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)


def detect_server(
    build_info: Mapping[str, Any],
    cmdline: Mapping[str, Any] | None = None,
    hello: Mapping[str, Any] | None = None,
) -> ServerInfo:
    """Tell the server kind from ``buildInfo`` (+ ``getCmdLineOpts`` and ``hello`` when readable). Pure.

    Percona reports ``psmdbVersion`` (and a ``-N`` build suffix such as ``8.0.19-7``); FerretDB reports
    ``ferretdbVersion``; Enterprise lists ``enterprise`` in ``modules``.
    """
    version = str(build_info.get("version", "?"))
    modules = [str(m).lower() for m in build_info.get("modules") or []]
    if "ferretdbVersion" in build_info:
        kind = ServerKind.FERRETDB
        own = str(build_info.get("ferretdbVersion") or "unknown")
        version = f"{'(version unknown,' if own == 'unknown' else own + ' ('}reports MongoDB {version})"
    elif "psmdbVersion" in build_info or (
        re.fullmatch(r"\d+\.\d+\.\d+-\d+", version) and "enterprise" not in modules
    ):
        kind = ServerKind.PERCONA
    elif "enterprise" in modules:
        kind = ServerKind.ENTERPRISE
    else:
        kind = ServerKind.COMMUNITY
    audit_log: Mapping[str, Any] | None = None
    if cmdline is not None:
        audit_log = dict((cmdline.get("parsed") or {}).get("auditLog") or {})
    return ServerInfo(kind=kind, version=version, audit_log=audit_log, topology=_topology(hello))


def _topology(hello: Mapping[str, Any] | None) -> str:
    if hello is None:
        return "unknown"
    if hello.get("msg") == "isdbgrid":
        return "mongos"
    if hello.get("setName"):
        return "replicaset"
    return "standalone"


def choose_mode(version: str, *, percona: bool = False, runtime_config: bool | None = True) -> Mode:
    """The runtime command family for this server. ``runtime_config`` None (unknown) counts as on. Pure."""
    if percona or runtime_config is False or parse_version(version) < (5, 0, 0):
        return Mode.PARAMETER
    if parse_version(version) >= (7, 1, 0):
        return Mode.CLUSTER_PARAMETER
    return Mode.AUDIT_CONFIG


def startup_advice(info: ServerInfo, *, with_replset: bool = False) -> str:
    """The options to add to mongod's startup so runtime switching works on ``info``'s server. Pure."""
    base = "--auditDestination file --auditFormat JSON --auditPath <dbPath>/auditLog.json"
    if info.kind is ServerKind.PERCONA or parse_version(info.version) < (5, 0, 0):
        filt = json_util.dumps(crud_filter(YCSB_OPS))
        return (
            f"{base} --auditFilter '{filt}' (config file: auditLog.destination/format/path/filter); "
            "auditAuthorizationSuccess is then switched at runtime"
        )
    replset = " --replSet rs0 (then rs.initiate() once)" if with_replset else ""
    return (
        f"{base} --auditRuntimeConfiguration true{replset} (config file: auditLog: {{destination: file, "
        "format: JSON, path: <dbPath>/auditLog.json, runtimeConfiguration: true}); no --auditFilter and "
        "no auditAuthorizationSuccess setParameter with it"
    )


def check_supported(info: ServerInfo) -> Mode:
    """The mode to use on ``info``'s server, or a UserError naming the server and what to change. Pure."""
    if info.kind is ServerKind.FERRETDB:
        raise UserError(
            f"mongodb-runtime cannot switch auditing on {info.label}: FerretDB has no audit log "
            "at all; run against MongoDB Enterprise, Percona Server for MongoDB or Atlas, or use "
            "the command or restart strategy (bench --audit-strategy, audit --strategy)"
        )
    if info.kind is ServerKind.COMMUNITY:
        raise UserError(
            f"mongodb-runtime cannot switch auditing on {info.label}: auditing exists only in "
            "MongoDB Enterprise, Percona Server for MongoDB and Atlas; switch servers or use "
            "the command or restart strategy (bench --audit-strategy, audit --strategy)"
        )
    if info.audit_log is not None and not info.audit_log.get("destination"):
        raise UserError(
            f"{info.label} was started without audit logging (no auditLog.destination), and "
            f"that cannot be turned on at runtime: restart mongod with {startup_advice(info)}"
        )
    mode = choose_mode(
        info.version, percona=info.kind is ServerKind.PERCONA, runtime_config=info.runtime_config
    )
    if mode is Mode.CLUSTER_PARAMETER and info.topology == "standalone":
        raise UserError(
            f"{info.label} needs setClusterParameter to change the audit config, which a "
            "standalone mongod refuses: restart it as a one-node replica set (--replSet rs0, "
            "then rs.initiate() once) or connect through mongos"
        )
    return mode


def crud_filter(ops: Iterable[str], namespace: str | None = None) -> dict[str, Any]:
    """The audit filter for the YCSB ``ops``: successful authChecks of their commands. Pure."""
    commands = ops_to_commands(ops)
    if not commands:
        raise UserError("no YCSB operation to audit: pass --ops, e.g. insert,read,update")
    doc: dict[str, Any] = {"atype": "authCheck", "param.command": {"$in": list(commands)}}
    if namespace:
        if "." not in namespace:
            raise UserError(f"namespace {namespace!r} must be <database>.<collection>, e.g. ycsb.usertable")
        doc["param.ns"] = namespace
    return doc


def build_set_command(
    mode: Mode, filter_doc: Mapping[str, Any] | None, authorization_success: bool
) -> dict[str, Any]:
    """The command setting this filter + auditAuthorizationSuccess (PARAMETER ignores the filter). Pure."""
    if mode is Mode.PARAMETER:
        return {"setParameter": 1, "auditAuthorizationSuccess": bool(authorization_success)}
    if filter_doc is None:
        raise AuditError("no audit filter to set")
    config = {"filter": dict(filter_doc), "auditAuthorizationSuccess": bool(authorization_success)}
    if mode is Mode.CLUSTER_PARAMETER:
        return {"setClusterParameter": {"auditConfig": config}}
    return {"setAuditConfig": 1, **config}


def build_status_command(mode: Mode) -> dict[str, Any]:
    """The command that reads the audit config back. Pure."""
    if mode is Mode.CLUSTER_PARAMETER:
        return {"getClusterParameter": "auditConfig"}
    if mode is Mode.AUDIT_CONFIG:
        return {"getAuditConfig": 1}
    return {"getParameter": 1, "auditAuthorizationSuccess": 1}


def build_on_command(
    version: str,
    ops: Iterable[str],
    namespace: str | None = None,
    *,
    percona: bool = False,
    runtime_config: bool | None = True,
) -> dict[str, Any]:
    """The "audit these YCSB ops" command for a server of this version. Pure."""
    mode = choose_mode(version, percona=percona, runtime_config=runtime_config)
    return build_set_command(mode, crud_filter(ops, namespace), True)


def build_off_command(
    version: str, *, percona: bool = False, runtime_config: bool | None = True
) -> dict[str, Any]:
    """The "audit nothing of YCSB's" command for a server of this version. Pure."""
    mode = choose_mode(version, percona=percona, runtime_config=runtime_config)
    return build_set_command(mode, NONE_FILTER, False)


def _values(spec: Any) -> frozenset[str] | None:
    if isinstance(spec, str):
        return frozenset({spec})
    if isinstance(spec, Mapping) and len(spec) == 1:
        op, arg = next(iter(spec.items()))
        if op == "$eq" and isinstance(arg, str):
            return frozenset({arg})
        if op == "$in" and isinstance(arg, list | tuple) and all(isinstance(a, str) for a in arg):
            return frozenset(arg)
    return None


def analyse_filter(filter_doc: Mapping[str, Any]) -> FilterInfo:
    """Which authCheck commands / namespace a filter admits (top-level equality and $in only). Pure."""
    commands: frozenset[str] | None = None
    namespace: str | None = None
    exact = True
    for key, spec in filter_doc.items():
        values = _values(spec)
        if key == "atype":
            if values is None:
                exact = False
            elif "authCheck" not in values:
                return FilterInfo(commands=frozenset(), namespace=None, exact=True)
        elif key == "param.command":
            if values is None:
                exact = False
            else:
                commands = values if commands is None else commands & values
        elif key == "param.ns" and isinstance(spec, str):
            namespace = spec
        else:
            exact = False
    return FilterInfo(commands=commands, namespace=namespace, exact=exact)


def parse_startup_filter(text: Any) -> dict[str, Any] | None:
    """``auditLog.filter`` from getCmdLineOpts (a JSON string, sometimes already a document). Pure."""
    if isinstance(text, Mapping):
        return dict(text)
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        parsed = json_util.loads(text)
    except ValueError:
        return None
    return dict(parsed) if isinstance(parsed, Mapping) else None


def state_from_config(
    label: str, mode: Mode, filter_doc: Mapping[str, Any] | None, authorization_success: bool | None
) -> AuditState:
    """Turn a read-back (filter, auditAuthorizationSuccess) into an AuditState. Pure.

    ``filter_doc`` None means the filter is unknown (setParameter mode without getCmdLineOpts).
    """
    raw = {
        "mode": str(mode),
        "filter": None if filter_doc is None else dict(filter_doc),
        "auditAuthorizationSuccess": authorization_success,
    }
    if authorization_success is None:
        return AuditState(None, frozenset(), f"{label}: auditAuthorizationSuccess not readable", raw)
    head = f"{label}, {mode}: auditAuthorizationSuccess={str(authorization_success).lower()}"
    if filter_doc is None:
        ops = frozenset(YCSB_OPS) if authorization_success else frozenset()
        return AuditState(
            authorization_success,
            ops,
            f"{head}, startup filter not readable (assumed to cover every op)",
            raw,
        )
    info = analyse_filter(filter_doc)
    if info.commands is None:
        what = "every command"
    elif info.commands:
        what = "authCheck of " + ",".join(sorted(info.commands))
    else:
        what = "no CRUD (filter matches no authCheck)"
    if info.namespace:
        what += f" on {info.namespace}"
    if not info.exact:
        what += " (filter has other clauses)"
    admits = info.commands is None or bool(info.commands)
    enabled = bool(authorization_success) and admits
    ops = commands_to_ops(info.commands) if enabled else frozenset()
    return AuditState(enabled, ops, f"{head}, filter: {what}", raw)


def hint_command(url: str, command: Mapping[str, Any]) -> str:
    """A shell line that runs ``command`` with mongosh against ``url`` (password masked). Pure."""
    doc = json_util.dumps(dict(command), json_options=json_util.RELAXED_JSON_OPTIONS)
    return shlex.join(["mongosh", mask_secrets(url), "--quiet", "--eval", f"db.adminCommand({doc})"])


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


# ---------------------------------------------------------------- I/O: the strategy


def _fail_message(command: Mapping[str, Any], details: Mapping[str, Any] | None, info: ServerInfo) -> str:
    name = next(iter(command))
    details = details or {}
    code_name = str(details.get("codeName", ""))
    errmsg = one_line(str(details.get("errmsg", "")))
    if code_name == "AuditingNotEnabled":
        return f"{name}: {info.label} runs without audit logging; restart mongod with {startup_advice(info)}"
    if code_name == "RuntimeAuditConfigurationNotEnabled":
        return (
            f"{name}: {info.label} was started without auditLog.runtimeConfiguration: restart it with "
            f"{startup_advice(info)}, or let the tool read getCmdLineOpts (role clusterMonitor) so it "
            "falls back to setParameter auditAuthorizationSuccess"
        )
    if code_name == "Unauthorized":
        return (
            f"{name}: not authorized on {info.label}; the user needs clusterAdmin (or hostManager + "
            f"clusterManager + clusterMonitor) on admin: {errmsg}"
        )
    if code_name == "CommandNotFound":
        return f"{name}: {info.label} does not know this command ({errmsg})"
    return f"{name} failed on {info.label}: {errmsg or code_name or 'no error message'}"


class MongoRuntimeStrategy(AuditStrategy):
    """Switch audit filters on a running Enterprise / Percona server via a pymongo client."""

    name = "mongodb-runtime"

    def __init__(
        self,
        client: Any,
        info: ServerInfo,
        mode: Mode,
        *,
        namespace: str | None = None,
        url: str | None = None,
    ) -> None:
        self.client = client
        self.info = info
        self.mode = mode
        self.namespace = namespace
        self.url = url or "mongodb://<host>:<port>/"

    @classmethod
    def connect(
        cls, client: Any, *, namespace: str | None = None, url: str | None = None
    ) -> MongoRuntimeStrategy:
        """Detect the server, refuse clearly if it cannot be switched, and read the state once."""
        from pymongo.errors import OperationFailure, PyMongoError

        if namespace:
            crud_filter(["read"], namespace)  # validates the namespace early
        try:
            build_info = client.admin.command("buildInfo")
            hello = client.admin.command("hello")
        except PyMongoError as exc:
            raise UserError(f"cannot reach MongoDB{_at(url)}: {one_line(str(exc))}") from None
        try:
            cmdline = client.admin.command("getCmdLineOpts")
        except OperationFailure:
            cmdline = None  # no clusterMonitor: decide from the version and the server's errors
        info = detect_server(build_info, cmdline, hello)
        mode = check_supported(info)
        strategy = cls(client, info, mode, namespace=namespace, url=url)
        strategy.status()
        return strategy

    # -- low level
    def _run(self, command: Mapping[str, Any]) -> Mapping[str, Any]:
        from pymongo.errors import OperationFailure, PyMongoError

        try:
            return self.client.admin.command(dict(command))
        except OperationFailure as exc:
            raise AuditError(_fail_message(command, exc.details, self.info)) from None
        except PyMongoError as exc:
            name = next(iter(command))
            raise AuditError(f"{name} on {self.info.label}: {one_line(str(exc))}") from None

    def _startup_filter(self) -> dict[str, Any] | None:
        if self.info.audit_log is None:
            return None
        text = self.info.audit_log.get("filter")
        if text is None:
            return {}  # started without a filter: every event passes
        return parse_startup_filter(text)

    def _read_config(self) -> tuple[dict[str, Any] | None, bool | None]:
        reply = self._run(build_status_command(self.mode))
        if self.mode is Mode.PARAMETER:
            aas = reply.get("auditAuthorizationSuccess")
            return self._startup_filter(), None if aas is None else bool(aas)
        if self.mode is Mode.CLUSTER_PARAMETER:
            params = reply.get("clusterParameters") or [{}]
            reply = next((p for p in params if p.get("_id") == "auditConfig"), params[0])
        filt = reply.get("filter")
        aas = reply.get("auditAuthorizationSuccess")
        return (dict(filt) if isinstance(filt, Mapping) else {}), (None if aas is None else bool(aas))

    # -- the interface
    def status(self) -> AuditState:
        filt, aas = self._read_config()
        return state_from_config(self.info.label, self.mode, filt, aas)

    def _apply(self, filter_doc: Mapping[str, Any] | None, aas: bool) -> AuditState:
        self._run(build_set_command(self.mode, filter_doc, aas))
        state = self.status()
        got_filter, got_aas = state.raw.get("filter"), state.raw.get("auditAuthorizationSuccess")
        if got_aas != aas or (self.mode is not Mode.PARAMETER and got_filter != dict(filter_doc or {})):
            raise AuditError(
                f"{self.name}: {self.info.label} reads back {state.describe()} after "
                f"{next(iter(build_set_command(self.mode, filter_doc, aas)))}"
            )
        return state

    def enable(self, ops: Iterable[str]) -> AuditState:
        wanted = normalize_ops(ops)
        self._apply(crud_filter(wanted, self.namespace), True)
        return self.verify(True, wanted)

    def disable(self) -> AuditState:
        self._apply(NONE_FILTER, False)
        return self.verify(False)

    def verify(self, expected_on: bool, ops: Iterable[str] = ()) -> AuditState:
        wanted = normalize_ops(ops)
        state = self.status()
        problem = mismatch(state, expected_on, wanted)
        if problem and self.mode is Mode.PARAMETER and expected_on:
            filt = json_util.dumps(crud_filter(wanted or YCSB_OPS, self.namespace))
            problem += (
                f"; the filter is fixed at startup on {self.info.label}: restart mongod with "
                f"--auditFilter '{filt}'"
            )
        if problem:
            raise AuditError(f"{self.name}: audit should be {'on' if expected_on else 'off'} but {problem}")
        return state

    def restore(self, state: AuditState) -> AuditState:
        filt, aas = state.raw.get("filter"), state.raw.get("auditAuthorizationSuccess")
        if aas is None:
            raise AuditError(f"{self.name}: the state to restore was never read ({state.detail})")
        current = self.status()
        if current.raw.get("auditAuthorizationSuccess") == aas and (
            self.mode is Mode.PARAMETER or current.raw.get("filter") == filt
        ):
            return current
        return self._apply(filt, bool(aas))

    def manual_restore_hint(self, state: AuditState) -> str:
        filt, aas = state.raw.get("filter"), state.raw.get("auditAuthorizationSuccess")
        if aas is None:
            return f"(state unknown) inspect with: {hint_command(self.url, build_status_command(self.mode))}"
        return hint_command(self.url, build_set_command(self.mode, filt or {}, bool(aas)))


def _at(url: str | None) -> str:
    return f" at {mask_secrets(url)}" if url else ""

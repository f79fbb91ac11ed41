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

The mode is chosen from the binary version *and* the feature compatibility version. Every node of the
deployment is listed (``topology``): setParameter is applied on each data-bearing member and each mongos
over direct connections; setAuditConfig / setClusterParameter go through the entry connection (primary or
mongos) and reach the others by replication and polling. Either way, every node is read back before a
run starts, waiting up to a bound; a node that does not report the new state blocks the run, by name.
Refused before anything changes: Atlas (its own auditing API), the OCSF audit schema, an FCV that does
not allow the command, a starting state that cannot be read back.
"""

from __future__ import annotations

import enum
import json
import re
import shlex
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ycsb_runner.audit.base import (
    BASELINE_RUNTIME_FILTER,
    BASELINE_RUNTIME_PARAMETER,
    YCSB_OPS,
    AuditError,
    AuditState,
    AuditStrategy,
    mismatch,
    normalize_ops,
    one_line,
    op_commands,
    ops_to_commands,
)
from ycsb_runner.audit.filters import CANNOT_VERIFY, FilterSyntaxError, coverage, parse_filter
from ycsb_runner.audit.registry import RestoreRequest, StrategySpec, pick, register_strategy, truthy
from ycsb_runner.audit.topology import (
    DirectConnections,
    DirectFn,
    Node,
    Topology,
    discover,
    is_atlas,
    member_url,
    seed_hosts,
)
from ycsb_runner.errors import UserError
from ycsb_runner.safe.secrets import mask_url


def _json_util() -> Any:
    """bson's Extended JSON, imported when a filter or a command is written: every ``ycsb-runner`` command
    imports this module (its strategy registers itself), most never need bson (30-50 ms)."""
    from bson import json_util

    return json_util


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
class ServerFacts:
    """What buildInfo / getCmdLineOpts / hello told us. ``audit_log`` is None when it could not be read;
    ``fcv`` is the feature compatibility version (None: not readable)."""

    kind: ServerKind
    version: str
    audit_log: Mapping[str, Any] | None
    topology: str  # standalone | replicaset | mongos | unknown
    fcv: str | None = None
    atlas: bool = False

    @property
    def schema(self) -> str | None:
        """``auditLog.schema`` (8.0+: ``mongo`` or ``OCSF``); None when getCmdLineOpts was not readable."""
        if self.audit_log is None:
            return None
        return str(self.audit_log.get("schema") or "mongo")

    @property
    def label(self) -> str:
        return f"{self.kind} {self.version}"

    @property
    def runtime_config(self) -> bool | None:
        """``auditLog.runtimeConfiguration`` as started (None: unknown)."""
        if self.audit_log is None:
            return None
        return _truthy(self.audit_log.get("runtimeConfiguration"))


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
    *,
    fcv: str | None = None,
    atlas: bool = False,
) -> ServerFacts:
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
    return ServerFacts(
        kind=kind, version=version, audit_log=audit_log, topology=_topology(hello), fcv=fcv, atlas=atlas
    )


def fcv_from_reply(reply: Mapping[str, Any] | None) -> str | None:
    """``getParameter featureCompatibilityVersion`` -> ``"7.0"`` (the reply nests it as
    ``{featureCompatibilityVersion: {version: "7.0"}}``; during an upgrade ``targetVersion`` is set too,
    and the lower one counts). Pure."""
    doc = (reply or {}).get("featureCompatibilityVersion")
    if isinstance(doc, str):
        return doc
    if not isinstance(doc, Mapping) or not doc.get("version"):
        return None
    return str(doc["version"])


def _topology(hello: Mapping[str, Any] | None) -> str:
    if hello is None:
        return "unknown"
    if hello.get("msg") == "isdbgrid":
        return "mongos"
    if hello.get("setName"):
        return "replicaset"
    return "standalone"


def choose_mode(
    version: str, *, percona: bool = False, runtime_config: bool | None = True, fcv: str | None = None
) -> Mode:
    """The runtime command family for this server. ``runtime_config`` None (unknown) counts as on. The
    auditConfig cluster parameter needs the binary *and* the feature compatibility version at 7.1+. Pure."""
    if percona or runtime_config is False or parse_version(version) < (5, 0, 0):
        return Mode.PARAMETER
    effective = parse_version(version) if fcv is None else min(parse_version(version), parse_version(fcv))
    if effective >= (7, 1, 0):
        return Mode.CLUSTER_PARAMETER
    return Mode.AUDIT_CONFIG


def startup_advice(info: ServerFacts, *, with_replset: bool = False) -> str:
    """The options to add to mongod's startup so runtime switching works on ``info``'s server. Pure."""
    base = "--auditDestination file --auditFormat JSON --auditPath <dbPath>/auditLog.json"
    if info.kind is ServerKind.PERCONA or parse_version(info.version) < (5, 0, 0):
        filt = _json_util().dumps(crud_filter(YCSB_OPS))
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


def check_supported(info: ServerFacts) -> Mode:
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
    if info.atlas:
        raise UserError(
            f"mongodb-runtime cannot switch auditing on Atlas ({info.label}): Atlas supports "
            "neither setAuditConfig/getAuditConfig nor setParameter auditAuthorizationSuccess; "
            "use Atlas database auditing (atlas auditing update --enabled "
            "--auditAuthorizationSuccess --auditFilter '...', or PATCH "
            "/api/atlas/v2/groups/{groupId}/auditLog) or --strategy command with those calls"
        )
    if info.audit_log is not None and not info.audit_log.get("destination"):
        raise UserError(
            f"{info.label} was started without audit logging (no auditLog.destination), and "
            f"that cannot be turned on at runtime: restart mongod with {startup_advice(info)}"
        )
    check_schema(info)
    mode = choose_mode(
        info.version,
        percona=info.kind is ServerKind.PERCONA,
        runtime_config=info.runtime_config,
        fcv=info.fcv,
    )
    if mode is Mode.AUDIT_CONFIG and parse_version(info.version) >= (7, 1, 0):
        target = ".".join(str(p) for p in parse_version(info.version)[:2])
        raise UserError(
            f"{info.label} runs at feature compatibility version {info.fcv}: it answers "
            "setAuditConfig with CommandNotSupported and the auditConfig cluster parameter "
            "needs FCV 7.1 or later; raise it first (db.adminCommand({setFeatureCompatibility"
            f'Version: "{target}", confirm: true}}))' + " or restart without "
            "auditLog.runtimeConfiguration to switch with setParameter"
        )
    if mode is Mode.CLUSTER_PARAMETER and info.topology == "standalone":
        raise UserError(
            f"{info.label} needs setClusterParameter to change the audit config, which a "
            "standalone mongod refuses: restart it as a one-node replica set (--replSet rs0, "
            "then rs.initiate() once) or connect through mongos"
        )
    return mode


def check_schema(info: ServerFacts) -> None:
    """Refuse a server whose audit events are not in the ``mongo`` schema (or whose schema is unknown on
    8.0+, where OCSF exists): the CRUD filter and its read-back are written for ``atype``/``param``. Pure."""
    schema = info.schema
    if schema is None:
        if parse_version(info.version) >= (8, 0, 0) and info.kind is not ServerKind.PERCONA:
            raise UserError(
                f"cannot read auditLog.schema on {info.label} (getCmdLineOpts needs the "
                "clusterMonitor role): with the OCSF schema the CRUD filter would match nothing, "
                "so grant clusterMonitor to the user and rerun"
            )
        return
    if schema.lower() != "mongo":
        raise UserError(
            f"{info.label} writes audit events in the {schema} schema (auditLog.schema: {schema}):"
            " OCSF events have no atype/param fields, so a filter on authCheck of YCSB's commands "
            "matches nothing while the read-back says on; ycsb-runner does not build OCSF filters:"
            " restart with auditLog.schema: mongo (the default) for this study"
        )


def crud_filter(ops: Iterable[str], namespace: str | None = None, *, upsert: bool = False) -> dict[str, Any]:
    """The audit filter for the YCSB ``ops``: successful authChecks of the commands the binding sends for
    them (with ``upsert``, inserts are ``update`` commands). Pure."""
    commands = ops_to_commands(ops, upsert=upsert)
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
    upsert: bool = False,
) -> dict[str, Any]:
    """The "audit these YCSB ops" command for a server of this version. Pure."""
    mode = choose_mode(version, percona=percona, runtime_config=runtime_config)
    return build_set_command(mode, crud_filter(ops, namespace, upsert=upsert), True)


def build_off_command(
    version: str, *, percona: bool = False, runtime_config: bool | None = True
) -> dict[str, Any]:
    """The "audit nothing of YCSB's" command for a server of this version. Pure."""
    mode = choose_mode(version, percona=percona, runtime_config=runtime_config)
    return build_set_command(mode, NONE_FILTER, False)


def parse_startup_filter(text: Any) -> dict[str, Any] | None:
    """``auditLog.filter`` from getCmdLineOpts, parsed as mongod parses it (lenient JSON); None when it
    cannot be read. Pure."""
    try:
        return parse_filter(text)
    except FilterSyntaxError:
        return None


def state_from_config(
    label: str,
    mode: Mode,
    filter_doc: Mapping[str, Any] | None,
    authorization_success: bool | None,
    *,
    namespace: str | None = None,
    upsert: bool = False,
    filter_problem: str = "",
) -> AuditState:
    """Turn a read-back (filter, auditAuthorizationSuccess) into an AuditState. Pure.

    ``filter_doc`` None means the filter is unknown (not readable, or not understood: ``filter_problem``
    says why); the state is then never "on". ``namespace`` is where YCSB writes (for ``param.ns`` clauses).
    A YCSB op counts as audited only when the filter admits the authCheck of every command it sends.
    """
    raw = {
        "mode": str(mode),
        "filter": None if filter_doc is None else dict(filter_doc),
        "auditAuthorizationSuccess": authorization_success,
    }
    if authorization_success is None:
        return AuditState(None, frozenset(), f"{label}: auditAuthorizationSuccess not readable", raw)
    head = f"{label}, {mode}: auditAuthorizationSuccess={str(authorization_success).lower()}"
    if not authorization_success:  # successful authChecks (every CRUD operation) are not recorded at all
        return AuditState(False, frozenset(), f"{head}: no successful authCheck is audited", raw)
    if filter_doc is None:
        why = f" ({filter_problem})" if filter_problem else ""
        return AuditState(None, frozenset(), f"{head}, {CANNOT_VERIFY}{why}", raw)
    table = op_commands(upsert)
    cover = coverage(filter_doc, sorted({c for cmds in table.values() for c in cmds}), namespace)
    ops = frozenset(op for op, cmds in table.items() if set(cmds) <= cover.audited)
    what = cover.describe() + (" (inserts are upserts: update commands)" if upsert else "")
    if ops:
        return AuditState(True, ops, f"{head}, filter: {what}", raw)
    if cover.unknown:
        return AuditState(None, frozenset(), f"{head}, filter: {what}", raw)
    return AuditState(False, frozenset(), f"{head}, filter: {what}", raw)


def mongosh_eval(command: Mapping[str, Any]) -> str:
    """``db.adminCommand(EJSON.parse("..."))`` for mongosh: relaxed extended JSON in a JS string
    literal, so regexes, Timestamps and ObjectIds survive exactly. Pure."""
    text = _json_util().dumps(dict(command), json_options=_json_util().RELAXED_JSON_OPTIONS)
    return f"db.adminCommand(EJSON.parse({json.dumps(text)}))"


def hint_command(url: str, command: Mapping[str, Any]) -> str:
    """A shell line that runs ``command`` with mongosh against ``url`` (password masked). Pure."""
    return shlex.join(["mongosh", mask_url(url), "--quiet", "--eval", mongosh_eval(command)])


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true", "yes", "on"}
    return bool(value)


# ---------------------------------------------------------------- I/O: the strategy


def _fail_message(
    command: Mapping[str, Any], details: Mapping[str, Any] | None, info: ServerFacts, where: str = ""
) -> str:
    name = next(iter(command))
    details = details or {}
    code_name = str(details.get("codeName", ""))
    errmsg = one_line(str(details.get("errmsg", "")))
    at = f" ({where})" if where else ""
    if code_name == "AuditingNotEnabled":
        return (
            f"{name}: {info.label}{at} runs without audit logging; restart mongod with {startup_advice(info)}"
        )
    if code_name == "RuntimeAuditConfigurationNotEnabled":
        return (
            f"{name}: {info.label}{at} was started without auditLog.runtimeConfiguration: restart it with "
            f"{startup_advice(info)}, or let the tool read getCmdLineOpts (role clusterMonitor) so it "
            "falls back to setParameter auditAuthorizationSuccess"
        )
    if code_name == "Unauthorized":
        return (
            f"{name}: not authorized on {info.label}{at}; the user needs clusterAdmin (or hostManager + "
            f"clusterManager + clusterMonitor) on admin: {errmsg}"
        )
    if code_name == "CommandNotFound":
        return f"{name}: {info.label}{at} does not know this command ({errmsg})"
    if code_name == "NotImplemented" and "shard" in errmsg:
        return (
            f"{name}: {info.label}{at} is a data-bearing shard member ({errmsg}): the runtime audit "
            "configuration of a sharded cluster is set through mongos: connect --mongodb-url to a mongos"
        )
    return f"{name} failed on {info.label}{at}: {errmsg or code_name or 'no error message'}"


#: Extra seconds on top of the server's polling frequency before a node that has not picked the change
#: up counts as failed.
POLL_MARGIN_S = 30.0
DEFAULT_POLLING_S = 300.0  # auditConfigPollingFrequencySecs default (mongos)
REPLICATION_WAIT_S = 30.0  # replica-set members apply the change through the oplog
#: A delayed member (``secondaryDelaySecs``) applies the oplog entry that carries a runtime audit change
#: only after its delay: its wait is the delay plus the usual bound (the margin).


@dataclass(frozen=True)
class NodeRead:
    """What one node reported (``error`` set when it could not be read)."""

    node: Node
    state: AuditState
    error: str = ""

    def as_record(self, verified: bool | None = None) -> dict[str, Any]:
        row: dict[str, Any] = {
            "node": self.node.host,
            "role": self.node.role,
            "shard": self.node.shard,
            "state": {True: "on", False: "off", None: "unknown"}[self.state.enabled],
            "ops": sorted(self.state.ops),
            "detail": self.error or self.state.detail,
        }
        if verified is not None:
            row["verified"] = verified
        return row


class MongoRuntimeStrategy(AuditStrategy):
    """Switch audit filters on a running Enterprise / Percona deployment, node by node where needed."""

    name = "mongodb-runtime"

    def __init__(
        self,
        client: Any,
        info: ServerFacts,
        mode: Mode,
        *,
        namespace: str | None = None,
        url: str | None = None,
        topology: Topology | None = None,
        direct: DirectFn | None = None,
        target_namespace: str | None = None,
        verify_timeout_s: float | None = None,
        poll_s: float = 2.0,
        upsert: bool = False,
        log: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.client = client
        self.info = info
        self.mode = mode
        self.namespace = namespace
        self.target_namespace = target_namespace or namespace
        self.url = url or "mongodb://<host>:<port>/"
        self.topology = topology or Topology("standalone", (Node("<server>", "standalone"),))
        self.direct = direct
        self.poll_s = poll_s
        self.upsert = upsert
        self.log = log or _stderr
        self.clock, self.sleep = clock, sleep
        self._startup_filters: dict[str, tuple[dict[str, Any] | None, str]] = {}
        self.verify_timeout_s = self._default_wait() if verify_timeout_s is None else float(verify_timeout_s)
        self.last_nodes: tuple[dict[str, Any], ...] = ()

    @classmethod
    def connect(
        cls,
        client: Any,
        *,
        namespace: str | None = None,
        url: str | None = None,
        direct: DirectFn | None = None,
        mongos_docs: Any = None,
        allow_unlisted: bool = False,
        **options: Any,
    ) -> MongoRuntimeStrategy:
        """Detect server and topology, refuse clearly (before any change) if it cannot be switched."""
        if namespace:
            crud_filter(["read"], namespace)  # validates the namespace early
        build_info, hello, cmdline = _entry_replies(client, url)
        seeds = seed_hosts(client) or _url_hosts(url)
        if is_atlas(seeds):  # refuse before listing (Atlas members are not reachable one by one)
            check_supported(detect_server(build_info, cmdline, hello, atlas=True))
        if direct is None and url:
            direct = DirectConnections(url).command
        topo = _list_nodes(client, hello, seeds, url, direct, mongos_docs, allow_unlisted)
        fcv = _read_fcv(client, topo, direct)
        info = detect_server(build_info, cmdline, hello, fcv=fcv, atlas=topo.atlas)
        mode = check_supported(info)
        if len(topo.nodes) > 1 and direct is None:
            raise UserError(
                f"mongodb-runtime must reach every node of the {topo.describe()}: pass the "
                "connection string (--mongodb-url)"
            )
        strategy = cls(
            client, info, mode, namespace=namespace, url=url, topology=topo, direct=direct, **options
        )
        for line in topo.unlisted:
            strategy.log(f"audit: WARNING: {line}")
        reads = strategy.read_nodes()
        if reads and all(r.error for r in reads):
            raise AuditError(reads[0].error)
        return strategy

    # -- low level
    def _default_wait(self) -> float:
        if self.mode is Mode.PARAMETER or self._single():
            return 0.0
        if self.topology.kind == "replicaset":
            return REPLICATION_WAIT_S
        polling = DEFAULT_POLLING_S
        try:
            reply = self.client.admin.command({"getParameter": 1, "auditConfigPollingFrequencySecs": 1})
            polling = float(reply.get("auditConfigPollingFrequencySecs") or polling)
        except Exception:  # noqa: BLE001 - unknown parameter / no privilege: the documented default
            pass
        return polling + POLL_MARGIN_S

    @property
    def baseline(self) -> str:  # type: ignore[override]
        """setParameter keeps the startup filter; the runtime modes set a filter that matches nothing."""
        return BASELINE_RUNTIME_PARAMETER if self.mode is Mode.PARAMETER else BASELINE_RUNTIME_FILTER

    def _single(self) -> bool:
        return len(self.topology.nodes) == 1 and self.topology.kind != "sharded"

    def _on(self, node: Node | None, command: Mapping[str, Any]) -> Mapping[str, Any]:
        """Run ``command`` on ``node`` (None: through the entry connection)."""
        from pymongo.errors import OperationFailure, PyMongoError

        where = "" if node is None else node.label
        try:
            if node is None or self._single():
                return self.client.admin.command(dict(command))
            assert self.direct is not None
            return self.direct(node.host, command)
        except OperationFailure as exc:
            raise AuditError(_fail_message(command, exc.details, self.info, where)) from None
        except PyMongoError as exc:
            name = next(iter(command))
            raise AuditError(f"{name} on {where or self.info.label}: {one_line(str(exc))}") from None

    def _startup_filter(self, node: Node) -> tuple[dict[str, Any] | None, str]:
        """(filter, problem) of the node's ``auditLog.filter`` (setParameter mode: fixed at startup)."""
        if node.host not in self._startup_filters:
            self._startup_filters[node.host] = self._read_startup_filter(node)
        return self._startup_filters[node.host]

    def _read_startup_filter(self, node: Node) -> tuple[dict[str, Any] | None, str]:
        audit_log = self.info.audit_log if self._single() else None
        if audit_log is None:
            try:
                opts = self._on(node, {"getCmdLineOpts": 1})
            except AuditError as exc:
                return None, f"getCmdLineOpts not readable: {exc}"
            audit_log = dict((opts.get("parsed") or {}).get("auditLog") or {})
        text = audit_log.get("filter")
        if text is None:
            return {}, ""  # started without a filter: every event passes
        parsed = parse_startup_filter(text)
        if parsed is None:
            return None, f"auditLog.filter {one_line(str(text), 120)!r} is not a filter ycsb-runner can read"
        return parsed, ""

    def _read_config(self, node: Node | None) -> tuple[dict[str, Any] | None, bool | None, str]:
        reply = self._on(node, build_status_command(self.mode))
        if self.mode is Mode.PARAMETER:
            aas = reply.get("auditAuthorizationSuccess")
            filt, problem = self._startup_filter(node or self.topology.nodes[0])
            return filt, None if aas is None else bool(aas), problem
        if self.mode is Mode.CLUSTER_PARAMETER:
            params = reply.get("clusterParameters") or [{}]
            reply = next((p for p in params if p.get("_id") == "auditConfig"), params[0])
        filt = reply.get("filter")
        aas = reply.get("auditAuthorizationSuccess")
        return (dict(filt) if isinstance(filt, Mapping) else {}), (None if aas is None else bool(aas)), ""

    def _state(self, label: str, filt: dict[str, Any] | None, aas: bool | None, problem: str) -> AuditState:
        return state_from_config(
            label,
            self.mode,
            filt,
            aas,
            namespace=self.target_namespace,
            upsert=self.upsert,
            filter_problem=problem,
        )

    def read_nodes(self) -> list[NodeRead]:
        """Every node's audit state (unreadable nodes carry the error). On mongos, getClusterParameter
        returns the config server's durable value (manual, "getClusterParameter"), not the copy that
        mongos applies: its record says so."""
        reads = []
        for node in self.topology.nodes:
            try:
                filt, aas, problem = self._read_config(node)
                state = self._state(node.label, filt, aas, problem)
                if self.mode is Mode.CLUSTER_PARAMETER and node.role == "mongos":
                    state = AuditState(
                        state.enabled,
                        state.ops,
                        f"{state.detail} (getClusterParameter on mongos returns the config server's "
                        "durable value, not this mongos's own copy)",
                        state.raw,
                    )
                reads.append(NodeRead(node, state))
            except AuditError as exc:
                reads.append(NodeRead(node, AuditState(None, frozenset(), str(exc)), error=str(exc)))
        return reads

    # -- the interface
    def status(self) -> AuditState:
        """The deployment's state: agreed by every node, else unknown ("nodes disagree"). ``raw`` holds what
        restore needs: the cluster-wide config (runtime modes) or each node's value (setParameter)."""
        reads = self.read_nodes()
        raw: dict[str, Any] = {
            "mode": str(self.mode),
            "topology": self.topology.kind,
            "nodes": {r.node.host: dict(r.state.raw, error=r.error) for r in reads},
        }
        if self.mode is not Mode.PARAMETER:
            if self._single():
                first = reads[0]
                filt, aas = first.state.raw.get("filter"), first.state.raw.get("auditAuthorizationSuccess")
            else:
                try:
                    filt, aas, _ = self._read_config(None)
                except AuditError as exc:
                    filt, aas = None, None
                    raw["entry_error"] = str(exc)
            raw.update(filter=filt, auditAuthorizationSuccess=aas)
        else:
            values = {r.state.raw.get("auditAuthorizationSuccess") for r in reads}
            raw["auditAuthorizationSuccess"] = values.pop() if len(values) == 1 else None
            raw["filter"] = reads[0].state.raw.get("filter") if len(reads) == 1 else None
        records = tuple(r.as_record() for r in reads)
        self.last_nodes = records
        states = {r.state.enabled for r in reads}
        if len(reads) == 1:
            only = reads[0].state
            return AuditState(only.enabled, only.ops, only.detail, raw, nodes=records)
        ops = frozenset.intersection(*(r.state.ops for r in reads)) if reads else frozenset()
        if len(states) == 1:
            enabled = states.pop()
            detail = (
                f"{self.topology.describe()}: all {len(reads)} nodes {'on' if enabled else 'off'} "
                f"({reads[0].state.detail})"
                if enabled is not None
                else f"{self.topology.describe()}: "
                + "; ".join(f"{r.node.label}: {r.state.detail}" for r in reads[:3])
            )
            return AuditState(enabled, ops if enabled else frozenset(), detail, raw, nodes=records)
        split = "; ".join(f"{r.node.label}: {r.state.describe()}" for r in reads)
        return AuditState(
            None, frozenset(), f"{self.topology.describe()}: nodes disagree ({split})", raw, nodes=records
        )

    def check_restorable(self, entry: AuditState) -> None:
        bad = [
            host
            for host, node in (entry.raw.get("nodes") or {}).items()
            if node.get("auditAuthorizationSuccess") is None
        ]
        if self.mode is not Mode.PARAMETER and entry.raw.get("auditAuthorizationSuccess") is None:
            bad = bad or ["the entry node"]
        if bad:
            raise AuditError(
                f"{self.name}: refusing to switch audit: the starting state of "
                f"{', '.join(bad)} cannot be read, so it could not be restored "
                f"({one_line(entry.detail, 200)})"
            )

    def persistence_note(self) -> str:
        if self.mode is Mode.PARAMETER:
            return (
                f"setParameter auditAuthorizationSuccess is set on each of the {len(self.topology.nodes)} "
                "node(s) listed; it lasts until that process restarts"
            )
        return (
            f"{self.mode} changes the audit configuration of the whole deployment (every node, "
            "authentication and DDL auditing included) and it persists across restarts until restored"
        )

    def _apply(
        self, filter_doc: Mapping[str, Any] | None, aas: bool, per_node: Mapping[str, bool] | None = None
    ) -> None:
        if self.mode is Mode.PARAMETER:
            for node in self.topology.nodes:
                value = aas if per_node is None else per_node[node.host]
                self._on(node, build_set_command(self.mode, None, value))
            return
        self._on(None, build_set_command(self.mode, filter_doc, aas))

    def node_wait_s(self, node: Node) -> float:
        """How long ``node`` may take to report a new state: the bound, plus its ``secondaryDelaySecs``
        when the change reaches it through the oplog (runtime modes; setParameter acts on the process)."""
        delayed = node.delay_s if self.mode is not Mode.PARAMETER and not self._single() else 0.0
        return self.verify_timeout_s + delayed

    def _wait_nodes(self, check: Any, what: str, ops: frozenset[str] | None = None) -> list[NodeRead]:
        """Poll every node until ``check(read)`` returns '' for each, or a failing node's own bound
        (``node_wait_s``) passes. Waiting on a delayed member is said once, in a progress line."""
        start = self.clock()
        announced: set[str] = set()
        while True:
            reads = self.read_nodes()
            problems = [(r, check(r)) for r in reads]
            failing = [(r, p) for r, p in problems if p]
            self.last_nodes = tuple(r.as_record(verified=not p) for r, p in problems)
            if not failing:
                for r in reads:
                    if r.node.host in announced:
                        self.log(f"audit: {r.node.label} verified after {self.clock() - start:.0f} s")
                return reads
            now = self.clock()
            expired = [(r, p) for r, p in failing if now - start >= self.node_wait_s(r.node)]
            if expired:
                waited = f" after {now - start:.0f}s" if self.verify_timeout_s else ""
                names = "; ".join(f"{r.node.label}: {p}" for r, p in expired)
                message = (
                    f"{self.name}: {what} but it is not verified on {len(expired)} of {len(reads)} "
                    f"node(s){waited}, the run does not start: {names}"
                )
                if ops is not None and self.mode is Mode.PARAMETER:
                    filt = _json_util().dumps(
                        crud_filter(ops or YCSB_OPS, self.namespace, upsert=self.upsert)
                    )
                    message += (
                        f"; the filter is fixed at startup on {self.info.label}: restart mongod with "
                        f"--auditFilter '{filt}'"
                    )
                raise AuditError(message)
            for r, _ in failing:
                if (
                    r.node.delay_s
                    and r.node.host not in announced
                    and self.node_wait_s(r.node) > (self.verify_timeout_s)
                ):
                    announced.add(r.node.host)
                    self.log(
                        f"audit: waiting up to {self.node_wait_s(r.node):.0f} s for {r.node.label} to "
                        f"report audit {what.removeprefix('audit should be ')} (secondaryDelaySecs "
                        f"{r.node.delay_s:g} + {self.verify_timeout_s:g} s margin: it applies the "
                        "change from the oplog only after its delay)"
                    )
            next_end = min(start + self.node_wait_s(r.node) for r, _ in failing)
            self.sleep(min(self.poll_s, max(next_end - self.clock(), 0.01)))

    def _aggregate(self, reads: list[NodeRead], enabled: bool) -> AuditState:
        state = self.status() if len(reads) != 1 else None
        records = self.last_nodes = tuple(r.as_record(verified=True) for r in reads)
        if state is None:
            only = reads[0].state
            return AuditState(only.enabled, only.ops, only.detail, dict(only.raw), nodes=records)
        return AuditState(state.enabled, state.ops, state.detail, state.raw, nodes=records)

    def _expect(self, expected_on: bool, ops: frozenset[str], config: tuple[Any, bool] | None) -> Any:
        def check(read: NodeRead) -> str:
            if read.error:
                return read.error
            problem = mismatch(read.state, expected_on, ops)
            if problem:
                return problem
            if config is not None:
                filt, aas = config
                got_f, got_a = read.state.raw.get("filter"), read.state.raw.get("auditAuthorizationSuccess")
                if got_a != aas or (self.mode is not Mode.PARAMETER and got_f != dict(filt or {})):
                    return f"reads back {read.state.describe()}, not the configuration just set"
            return ""

        return check

    def enable(self, ops: Iterable[str]) -> AuditState:
        wanted = normalize_ops(ops)
        filt = crud_filter(wanted, self.namespace, upsert=self.upsert)
        self._apply(filt, True)
        reads = self._wait_nodes(self._expect(True, wanted, (filt, True)), "audit should be on", wanted)
        return self._aggregate(reads, True)

    def disable(self) -> AuditState:
        self._apply(NONE_FILTER, False)
        reads = self._wait_nodes(
            self._expect(False, frozenset(), (NONE_FILTER, False)), "audit should be off"
        )
        return self._aggregate(reads, False)

    def verify(self, expected_on: bool, ops: Iterable[str] = ()) -> AuditState:
        wanted = normalize_ops(ops)
        word = "on" if expected_on else "off"
        reads = self._wait_nodes(
            self._expect(expected_on, wanted, None),
            f"audit should be {word}",
            wanted if expected_on else None,
        )
        return self._aggregate(reads, expected_on)

    def _saved_per_node(self, state: AuditState) -> dict[str, bool]:
        saved = {h: n.get("auditAuthorizationSuccess") for h, n in (state.raw.get("nodes") or {}).items()}
        known = {v for v in saved.values() if v is not None}
        out: dict[str, bool] = {}
        for node in self.topology.nodes:
            value = saved.get(node.host)
            if value is None and len(known) == 1:
                value = next(iter(known))  # a node added since (failover, new member): the common value
            if value is None:
                raise AuditError(
                    f"{self.name}: no saved auditAuthorizationSuccess for {node.label}; set it by "
                    "hand: " + hint_command(member_url(self.url, node.host), build_status_command(self.mode))
                )
            out[node.host] = bool(value)
        return out

    def restore(self, state: AuditState) -> AuditState:
        if self.mode is Mode.PARAMETER:
            per_node = self._saved_per_node(state)

            def same(read: NodeRead) -> str:
                got = read.state.raw.get("auditAuthorizationSuccess")
                return read.error or (
                    ""
                    if got == per_node[read.node.host]
                    else f"auditAuthorizationSuccess={got}, not {per_node[read.node.host]}"
                )

            if any(same(r) for r in self.read_nodes()):
                self._apply(None, False, per_node)
            reads = self._wait_nodes(same, "audit should be restored")
            return self._aggregate(reads, bool(state.enabled))
        filt, aas = state.raw.get("filter"), state.raw.get("auditAuthorizationSuccess")
        if aas is None:
            raise AuditError(f"{self.name}: the state to restore was never read ({state.detail})")

        def restored(read: NodeRead) -> str:
            got_f, got_a = read.state.raw.get("filter"), read.state.raw.get("auditAuthorizationSuccess")
            if read.error:
                return read.error
            return (
                "" if (got_a == aas and got_f == dict(filt or {})) else f"reads back {read.state.describe()}"
            )

        current_f, current_a, _ = self._read_config(None)
        if current_a != aas or current_f != dict(filt or {}):
            self._apply(filt, bool(aas))
        reads = self._wait_nodes(restored, "audit should be restored")
        return self._aggregate(reads, bool(state.enabled))

    def restore_commands(self, state: AuditState) -> list[tuple[str, dict[str, Any]]]:
        """(connection string with the password masked, command) pairs that put ``state`` back."""
        if self.mode is Mode.PARAMETER:
            saved = {h: n.get("auditAuthorizationSuccess") for h, n in (state.raw.get("nodes") or {}).items()}
            return [
                (
                    mask_url(member_url(self.url, h) if not self._single() else self.url),
                    build_set_command(self.mode, None, bool(v)),
                )
                for h, v in saved.items()
                if v is not None
            ]
        filt, aas = state.raw.get("filter"), state.raw.get("auditAuthorizationSuccess")
        if aas is None:
            return []
        return [(mask_url(self.url), build_set_command(self.mode, filt or {}, bool(aas)))]

    def manual_restore_hint(self, state: AuditState) -> str:
        commands = self.restore_commands(state)
        if not commands:
            return f"(state unknown) inspect with: {hint_command(self.url, build_status_command(self.mode))}"
        return " && ".join(hint_command(url, cmd) for url, cmd in commands)

    def restore_options(self) -> dict[str, Any]:
        return {
            "url": mask_url(self.url),
            "namespace": self.namespace,
            "upsert": self.upsert,
            "target_namespace": self.target_namespace,
            "mode": str(self.mode),
            "topology": self.topology.describe(),
            "nodes": [{"host": n.host, "role": n.role, "shard": n.shard} for n in self.topology.nodes],
        }


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _entry_replies(client: Any, url: str | None) -> tuple[Any, Any, Any]:
    """``buildInfo``, ``hello`` and ``getCmdLineOpts`` (None without clusterMonitor: the version and the
    server's errors decide then) through the connection the user gave; UserError when it is unreachable."""
    from pymongo.errors import OperationFailure, PyMongoError

    try:
        build_info = client.admin.command("buildInfo")
        hello = client.admin.command("hello")
    except PyMongoError as exc:
        raise UserError(f"cannot reach MongoDB{_at(url)}: {one_line(str(exc))}") from None
    try:
        cmdline = client.admin.command("getCmdLineOpts")
    except OperationFailure:
        cmdline = None
    return build_info, hello, cmdline


def _list_nodes(
    client: Any,
    hello: Any,
    seeds: list[str],
    url: str | None,
    direct: DirectFn | None,
    mongos_docs: Any,
    allow_unlisted: bool,
) -> Topology:
    """The deployment's nodes (:func:`discover`); UserError when they cannot be listed."""
    from pymongo.errors import PyMongoError

    if mongos_docs is None and hasattr(client, "config"):

        def mongos_docs() -> list[Mapping[str, Any]]:
            return list(client.config.mongos.find({}, {"_id": 1, "ping": 1}))

    try:
        return discover(
            hello,
            seeds,
            entry=lambda c: client.admin.command(dict(c)),
            direct=direct or _no_direct,
            mongos_docs=mongos_docs,
            allow_unlisted=allow_unlisted,
        )
    except PyMongoError as exc:
        raise UserError(f"cannot list the nodes of the deployment{_at(url)}: {one_line(str(exc))}") from None


def _no_direct(host: str, command: Mapping[str, Any]) -> Mapping[str, Any]:
    from pymongo.errors import ConnectionFailure

    raise ConnectionFailure(f"no direct connection to {host} (no connection string given)")


def _url_hosts(url: str | None) -> list[str]:
    if not url or "://" not in url:
        return []
    netloc = url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0].rpartition("@")[2]
    return [h if ":" in h else f"{h}:27017" for h in netloc.split(",") if h]


def _read_fcv(client: Any, topo: Topology, direct: DirectFn | None) -> str | None:
    """The feature compatibility version: on the entry node, or (mongos has none) on a shard member."""
    command = {"getParameter": 1, "featureCompatibilityVersion": 1}
    try:
        fcv = fcv_from_reply(client.admin.command(command))
        if fcv:
            return fcv
    except Exception:  # noqa: BLE001 - mongos / no privilege: try a data-bearing member
        pass
    if direct is None:
        return None
    for node in topo.data_nodes:
        try:
            return fcv_from_reply(direct(node.host, command))
        except Exception:  # noqa: BLE001
            continue
    return None


def _at(url: str | None) -> str:
    return f" at {mask_url(url)}" if url else ""


def _make(opts: dict[str, Any], client: Any) -> AuditStrategy:
    if client is None:
        raise UserError("the mongodb-runtime strategy needs a MongoDB connection: pass --mongodb-url")
    extra = pick(opts, "target_namespace", "verify_timeout_s", "log", "clock", "sleep")
    if opts.get("verify_poll_s") is not None:
        extra["poll_s"] = float(opts["verify_poll_s"])
    return MongoRuntimeStrategy.connect(
        client,
        namespace=opts.get("namespace"),
        url=opts.get("url"),
        direct=opts.get("direct"),
        mongos_docs=opts.get("mongos_docs"),
        upsert=truthy(opts.get("upsert")),
        allow_unlisted=truthy(opts.get("allow_unlisted_members")),
        **extra,
    )


def _preflight(options: dict[str, Any], embedded: bool) -> list[str]:
    if not embedded:
        return []
    return [
        "--audit-strategy mongodb-runtime needs MONGODB_URL of MongoDB Enterprise, Percona Server or "
        "Atlas: the embedded FerretDB has no audit log (use --audit-strategy command or restart)"
    ]


def _restore(request: RestoreRequest) -> dict[str, Any]:
    saved, given = request.saved, request.given
    url = given["mongodb_url"] or saved.get("url")
    if not url or "***" in url:
        raise UserError(
            f"{request.path} stores the connection string without its password: pass --mongodb-url "
            "(or MONGODB_URL) for the same deployment"
        )
    return {
        "url": url,
        "namespace": saved.get("namespace"),
        "target_namespace": saved.get("target_namespace"),
        "allow_unlisted_members": given["allow_unlisted_members"],
    }


register_strategy(
    StrategySpec(
        name="mongodb-runtime",
        help="MongoDB Enterprise, Percona Server or Atlas: the audit filter set at runtime.",
        make=_make,
        cli_options=lambda given: {
            "namespace": given["namespace"],
            "url": given["mongodb_url"],
            "allow_unlisted_members": given["allow_unlisted_members"],
        },
        preflight=_preflight,
        restore=_restore,
        needs_client=True,
    )
)

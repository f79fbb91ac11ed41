"""mongodb-runtime: exact command documents per server version, detection, and the switch/verify logic.

The switch logic runs against ``SimulatedAuditServer``, a small in-process model of the audit commands
of Enterprise/Percona (no such server is available here); the FerretDB refusal runs over the wire.
"""

from __future__ import annotations

import io
from typing import Any

import pytest
from pymongo.errors import OperationFailure

from ycsb_runner.audit import AuditError, audit_guard, make_strategy
from ycsb_runner.audit.mongodb_runtime import (
    NONE_FILTER,
    Mode,
    MongoRuntimeStrategy,
    ServerKind,
    build_off_command,
    build_on_command,
    build_status_command,
    check_supported,
    choose_mode,
    crud_filter,
    detect_server,
    hint_command,
    parse_startup_filter,
    parse_version,
    state_from_config,
)
from ycsb_runner.errors import UserError

OPS = ["insert", "read", "update"]
ON_FILTER = {"atype": "authCheck", "param.command": {"$in": ["find", "insert", "update"]}}
OFF_FILTER = {"atype": "__ycsb_runner_none__"}  # matches nothing; {} would audit everything
ENTERPRISE = {"version": "7.0.23", "modules": ["enterprise"], "versionArray": [7, 0, 23, 0]}
AUDIT_RT = {
    "parsed": {
        "auditLog": {
            "destination": "file",
            "format": "JSON",
            "path": "/d/a.json",
            "runtimeConfiguration": True,
        }
    }
}
RS = {"isWritablePrimary": True, "setName": "rs0"}
STANDALONE = {"isWritablePrimary": True}


# ---------------------------------------------------------------- exact documents per version


@pytest.mark.parametrize(
    ("version", "kw", "expected"),
    [
        ("4.4.29", {}, {"setParameter": 1, "auditAuthorizationSuccess": True}),
        ("5.0.26", {}, {"setAuditConfig": 1, "filter": ON_FILTER, "auditAuthorizationSuccess": True}),
        ("6.0.14", {}, {"setAuditConfig": 1, "filter": ON_FILTER, "auditAuthorizationSuccess": True}),
        ("7.0.23", {}, {"setAuditConfig": 1, "filter": ON_FILTER, "auditAuthorizationSuccess": True}),
        (
            "7.1.0",
            {},
            {
                "setClusterParameter": {
                    "auditConfig": {"filter": ON_FILTER, "auditAuthorizationSuccess": True}
                }
            },
        ),
        (
            "8.0.4",
            {},
            {
                "setClusterParameter": {
                    "auditConfig": {"filter": ON_FILTER, "auditAuthorizationSuccess": True}
                }
            },
        ),
        ("6.0.12-9", {"percona": True}, {"setParameter": 1, "auditAuthorizationSuccess": True}),
        ("7.0.23", {"runtime_config": False}, {"setParameter": 1, "auditAuthorizationSuccess": True}),
    ],
)
def test_on_command_per_version(version: str, kw: dict[str, Any], expected: dict[str, Any]) -> None:
    doc = build_on_command(version, OPS, **kw)
    assert doc == expected
    assert list(doc)[0] == next(iter(expected))  # the command name must be the first key


@pytest.mark.parametrize(
    ("version", "kw", "expected"),
    [
        ("4.4.29", {}, {"setParameter": 1, "auditAuthorizationSuccess": False}),
        ("5.0.26", {}, {"setAuditConfig": 1, "filter": OFF_FILTER, "auditAuthorizationSuccess": False}),
        ("6.0.14", {}, {"setAuditConfig": 1, "filter": OFF_FILTER, "auditAuthorizationSuccess": False}),
        ("7.0.23", {}, {"setAuditConfig": 1, "filter": OFF_FILTER, "auditAuthorizationSuccess": False}),
        (
            "7.1.0",
            {},
            {
                "setClusterParameter": {
                    "auditConfig": {"filter": OFF_FILTER, "auditAuthorizationSuccess": False}
                }
            },
        ),
        (
            "8.0.4",
            {},
            {
                "setClusterParameter": {
                    "auditConfig": {"filter": OFF_FILTER, "auditAuthorizationSuccess": False}
                }
            },
        ),
        ("6.0.12-9", {"percona": True}, {"setParameter": 1, "auditAuthorizationSuccess": False}),
    ],
)
def test_off_command_per_version(version: str, kw: dict[str, Any], expected: dict[str, Any]) -> None:
    doc = build_off_command(version, **kw)
    assert doc == expected
    assert NONE_FILTER == OFF_FILTER


def test_status_commands() -> None:
    assert build_status_command(Mode.CLUSTER_PARAMETER) == {"getClusterParameter": "auditConfig"}
    assert build_status_command(Mode.AUDIT_CONFIG) == {"getAuditConfig": 1}
    assert build_status_command(Mode.PARAMETER) == {"getParameter": 1, "auditAuthorizationSuccess": 1}


def test_crud_filter_maps_every_ycsb_op() -> None:
    assert crud_filter(["scan"])["param.command"] == {"$in": ["find", "getMore"]}
    assert crud_filter(["readmodifywrite"])["param.command"] == {"$in": ["find", "update"]}
    assert crud_filter(["delete", "insert"])["param.command"] == {"$in": ["delete", "insert"]}
    assert crud_filter(OPS, "ycsb.usertable") == {**ON_FILTER, "param.ns": "ycsb.usertable"}
    with pytest.raises(UserError, match="<database>.<collection>"):
        crud_filter(OPS, "usertable")
    with pytest.raises(UserError, match="unknown YCSB operation"):
        crud_filter(["select"])
    with pytest.raises(UserError, match="no YCSB operation"):
        crud_filter([])


def test_choose_mode_boundaries() -> None:
    assert parse_version("8.0.0-rc3") == (8, 0, 0)
    assert choose_mode("4.4.0") is Mode.PARAMETER
    assert choose_mode("5.0.0") is Mode.AUDIT_CONFIG
    assert choose_mode("7.0.99") is Mode.AUDIT_CONFIG
    assert choose_mode("7.1.0") is Mode.CLUSTER_PARAMETER
    assert choose_mode("8.0.1", runtime_config=False) is Mode.PARAMETER
    assert choose_mode("8.0.1", percona=True) is Mode.PARAMETER
    assert choose_mode("8.0.1", runtime_config=None) is Mode.CLUSTER_PARAMETER


# ---------------------------------------------------------------- detection and refusals


def test_detect_kinds() -> None:
    assert detect_server(ENTERPRISE).kind is ServerKind.ENTERPRISE
    assert (
        detect_server({"version": "8.0.19-7", "psmdbVersion": "8.0.19-7", "modules": []}).kind
        is ServerKind.PERCONA
    )
    assert detect_server({"version": "6.0.12-9", "modules": []}).kind is ServerKind.PERCONA
    assert detect_server({"version": "7.0.5", "modules": []}).kind is ServerKind.COMMUNITY
    ferret = detect_server({"version": "7.0.42", "modules": [], "ferretdbVersion": "v1.24.2"})
    assert ferret.kind is ServerKind.FERRETDB and "v1.24.2" in ferret.label
    assert detect_server(ENTERPRISE, AUDIT_RT, RS).runtime_config is True
    assert detect_server(ENTERPRISE, None, {"msg": "isdbgrid"}).topology == "mongos"
    assert detect_server(ENTERPRISE, None, STANDALONE).topology == "standalone"
    assert detect_server(ENTERPRISE).audit_log is None


def test_refusals_name_server_and_fix() -> None:
    with pytest.raises(UserError, match="FerretDB.*no audit log"):
        check_supported(detect_server({"version": "7.0.42", "ferretdbVersion": "v1.24.2"}, {"parsed": {}}))
    with pytest.raises(UserError, match="MongoDB Community 7.0.5.*only in MongoDB Enterprise"):
        check_supported(detect_server({"version": "7.0.5", "modules": []}))
    with pytest.raises(
        UserError,
        match=r"Enterprise 7.0.23 was started without audit.*"
        r"--auditDestination file.*--auditRuntimeConfiguration true",
    ):
        check_supported(detect_server(ENTERPRISE, {"parsed": {}}, RS))
    with pytest.raises(
        UserError,
        match=r"4.4.29 was started without.*"
        r"--auditFilter '\{\"atype\": \"authCheck\"",
    ):
        check_supported(detect_server({"version": "4.4.29", "modules": ["enterprise"]}, {"parsed": {}}))
    with pytest.raises(UserError, match="standalone mongod refuses.*--replSet rs0"):
        check_supported(detect_server({"version": "8.0.4", "modules": ["enterprise"]}, AUDIT_RT, STANDALONE))
    assert (
        check_supported(detect_server({"version": "8.0.4", "modules": ["enterprise"]}, AUDIT_RT, RS))
        is Mode.CLUSTER_PARAMETER
    )
    no_rt = {"parsed": {"auditLog": {"destination": "file", "filter": "{}"}}}
    assert check_supported(detect_server(ENTERPRISE, no_rt, STANDALONE)) is Mode.PARAMETER


# ---------------------------------------------------------------- reading filters back


def test_state_from_config() -> None:
    on = state_from_config("X", Mode.AUDIT_CONFIG, ON_FILTER, True)
    assert on.enabled is True and on.ops == {"insert", "read", "update", "readmodifywrite"}
    assert "scan" not in on.ops  # getMore is not audited
    assert state_from_config("X", Mode.AUDIT_CONFIG, ON_FILTER, False).enabled is False
    assert state_from_config("X", Mode.AUDIT_CONFIG, NONE_FILTER, True).enabled is False
    everything = state_from_config("X", Mode.PARAMETER, {}, True)
    assert everything.enabled is True and len(everything.ops) == 6
    unknown = state_from_config("X", Mode.PARAMETER, None, True)
    assert unknown.enabled is None and "cannot verify what the startup filter audits" in unknown.detail
    assert state_from_config("X", Mode.PARAMETER, None, False).enabled is False  # no authCheck at all
    assert state_from_config("X", Mode.PARAMETER, None, None).enabled is None
    two_atypes = {"atype": {"$in": ["authCheck", "authenticate"]}, "param.command": "find"}
    assert state_from_config("X", Mode.AUDIT_CONFIG, two_atypes, True).ops == {"read"}
    by_ns = {**ON_FILTER, "param.ns": "ycsb.usertable"}
    assert state_from_config("X", Mode.AUDIT_CONFIG, by_ns, True, namespace="ycsb.usertable").enabled is True
    assert state_from_config("X", Mode.AUDIT_CONFIG, by_ns, True, namespace="other.t").enabled is False
    assert (
        state_from_config("X", Mode.AUDIT_CONFIG, by_ns, True).enabled is None
    )  # where YCSB writes: unknown


def test_startup_filter_and_hint() -> None:
    assert parse_startup_filter('{"atype": "authCheck"}') == {"atype": "authCheck"}
    assert parse_startup_filter("{atype: 'x'}") == {"atype": "x"}  # mongod's lenient syntax
    assert parse_startup_filter("{atype: ") is None
    hint = hint_command(
        "mongodb://root:s3cret@h:27017/admin",
        {"setAuditConfig": 1, "filter": {}, "auditAuthorizationSuccess": False},
    )
    assert "s3cret" not in hint and "root:***@" in hint
    assert "db.adminCommand(EJSON.parse(" in hint and '\\"setAuditConfig\\": 1' in hint


# ---------------------------------------------------------------- the strategy against a simulated server


class SimulatedAuditServer:
    """Enough of the Enterprise/Percona audit commands to exercise the strategy (admin.command only).

    Each reply follows the manual page of its command (named at the reply). ``runtime_config`` is how
    the server was started (``auditLog.runtimeConfiguration``), whether or not the user may read
    getCmdLineOpts; ``filter``/``aas`` are what it applies (from the config file when runtime
    configuration is off).
    """

    def __init__(
        self,
        build_info: dict[str, Any],
        cmdline: dict[str, Any] | None,
        hello: dict[str, Any],
        *,
        filt: dict[str, Any] | None = None,
        aas: bool = False,
        runtime_config: bool | None = None,
    ) -> None:
        self.build_info, self.cmdline, self.hello = build_info, cmdline, hello
        audit_log = (cmdline or {}).get("parsed", {}).get("auditLog") or {}
        self.runtime_config = (
            bool(audit_log.get("runtimeConfiguration")) if runtime_config is None else runtime_config
        )
        self.filter = filt if filt is not None else {}
        self.aas = aas
        self.sent: list[dict[str, Any]] = []
        self.fail_sets = False
        self.ignore_sets = False
        self.admin = self

    @property
    def _rt(self) -> bool:
        return self.runtime_config

    def command(self, cmd: Any) -> dict[str, Any]:
        doc = {cmd: 1} if isinstance(cmd, str) else dict(cmd)
        name = next(iter(doc))
        self.sent.append(doc)
        if name == "buildInfo":
            return dict(self.build_info)
        if name == "hello":
            return dict(self.hello)
        if name == "replSetGetConfig":
            # manual, "replSetGetConfig": {config: {_id, version, members: [{_id, host, ...}]}};
            # a standalone answers NoReplicationEnabled (76)
            if not self.hello.get("setName"):
                raise OperationFailure("not running with --replSet", 76, {"codeName": "NoReplicationEnabled"})
            member = {"_id": 0, "host": "db1:27017", "arbiterOnly": False, "hidden": False, "priority": 1}
            return {"config": {"_id": self.hello["setName"], "version": 1, "members": [member]}, "ok": 1}
        if name == "getCmdLineOpts":
            if self.cmdline is None:
                raise OperationFailure("not authorized", 13, {"codeName": "Unauthorized", "errmsg": "no"})
            return dict(self.cmdline)
        if name.startswith("set") and self.fail_sets:
            raise OperationFailure("boom", 8000, {"codeName": "Boom", "errmsg": "simulated failure"})
        if name == "setAuditConfig" and not self._rt:
            # Enterprise audit_mongod.cpp: setAuditConfig needs runtime configuration
            details = {
                "codeName": "RuntimeAuditConfigurationNotEnabled",
                "errmsg": "Runtime audit configuration has not been enabled",
            }
            raise OperationFailure("Runtime audit configuration has not been enabled", 1, details)
        if name == "getClusterParameter":
            # manual, "getClusterParameter" / "auditConfig": {clusterParameters: [{_id, filter, aas}]}
            return {
                "clusterParameters": [
                    {"_id": "auditConfig", "filter": self.filter, "auditAuthorizationSuccess": self.aas}
                ],
                "ok": 1,
            }
        if name == "getAuditConfig":
            # manual, "getAuditConfig", Behavior: nodes not participating in runtime audit configuration
            # return their configuration file settings for auditLog.filter and auditAuthorizationSuccess
            return {"filter": self.filter, "auditAuthorizationSuccess": self.aas, "ok": 1}
        if name == "getParameter":
            # manual, "getParameter": {<name>: <value>, ok: 1}
            return {"auditAuthorizationSuccess": self.aas, "ok": 1}
        if self.ignore_sets:
            return {"ok": 1}
        if name == "setClusterParameter":
            conf = doc[name]["auditConfig"]
            self.filter, self.aas = conf["filter"], conf["auditAuthorizationSuccess"]
        elif name == "setAuditConfig":
            self.filter, self.aas = doc["filter"], doc["auditAuthorizationSuccess"]
        elif name == "setParameter":
            # Enterprise jstest (runtime audit config): the parameter is refused with runtime config on
            if self._rt:
                raise OperationFailure("no", 2, {"codeName": "BadValue", "errmsg": "runtime config is on"})
            self.aas = doc["auditAuthorizationSuccess"]
        else:
            raise OperationFailure("nope", 59, {"codeName": "CommandNotFound", "errmsg": f"no such {name}"})
        return {"ok": 1}


def _server(version: str = "7.0.23", **kw: Any) -> SimulatedAuditServer:
    bi = {"version": version, "modules": ["enterprise"]}
    return SimulatedAuditServer(bi, kw.pop("cmdline", AUDIT_RT), kw.pop("hello", RS), **kw)


@pytest.mark.parametrize(
    ("version", "first"), [("7.0.23", "setAuditConfig"), ("8.0.4", "setClusterParameter")]
)
def test_enable_disable_verify(version: str, first: str) -> None:
    srv = _server(version)
    strat = make_strategy("mongodb-runtime", client=srv, options={"namespace": "ycsb.usertable"})
    assert strat.status().enabled is False  # {} with auditAuthorizationSuccess false: no CRUD events
    on = strat.enable(OPS)
    assert on.enabled is True and {"insert", "read", "update"} <= on.ops
    assert srv.filter == {**ON_FILTER, "param.ns": "ycsb.usertable"} and srv.aas is True
    assert next(iter(srv.sent[-1])) in {"getAuditConfig", "getClusterParameter"}  # read back after the set
    assert any(next(iter(d)) == first for d in srv.sent)
    off = strat.disable()
    assert off.enabled is False and srv.filter == NONE_FILTER and srv.aas is False
    with pytest.raises(AuditError, match="should be on but it is not verified on 1 of 1 node.*it is off"):
        strat.verify(True, OPS)


def test_set_that_does_not_stick_is_caught() -> None:
    srv = _server()
    strat = make_strategy("mongodb-runtime", client=srv, options={})
    srv.ignore_sets = True
    with pytest.raises(
        AuditError, match="audit should be on but it is not verified on 1 of 1 node.*it is off"
    ):
        strat.enable(OPS)


def test_percona_parameter_mode_checks_startup_filter() -> None:
    bi = {"version": "6.0.12-9", "psmdbVersion": "6.0.12-9", "modules": []}
    narrow = {
        "parsed": {
            "auditLog": {"destination": "file", "filter": '{"atype": "authCheck", "param.command": "insert"}'}
        }
    }
    srv = SimulatedAuditServer(bi, narrow, RS)
    strat = make_strategy("mongodb-runtime", client=srv, options={})
    assert isinstance(strat, MongoRuntimeStrategy) and strat.mode is Mode.PARAMETER
    assert strat.enable(["insert"]).enabled is True
    assert srv.sent[-1] == {"getParameter": 1, "auditAuthorizationSuccess": 1}
    with pytest.raises(AuditError, match=r"does not audit read.*restart mongod with --auditFilter"):
        strat.enable(["insert", "read"])


def test_unknown_runtime_config_is_refused_at_the_first_set_with_nothing_changed() -> None:
    """No getCmdLineOpts privilege, and the server runs without runtime configuration: getAuditConfig
    answers with the config-file settings (so the starting state is read and nothing is refused early);
    the first setAuditConfig is refused with RuntimeAuditConfigurationNotEnabled, which is told as what
    to do, and the server is left as it was."""
    startup = {"atype": "authenticate"}
    srv = _server(cmdline=None, runtime_config=False, filt=startup, aas=False)
    strat = make_strategy("mongodb-runtime", client=srv, options={})
    assert isinstance(strat, MongoRuntimeStrategy) and strat.mode is Mode.AUDIT_CONFIG
    entry = strat.status()
    assert entry.enabled is False and entry.raw["filter"] == startup
    with pytest.raises(AuditError, match="without auditLog.runtimeConfiguration: restart it with"):
        strat.enable(OPS)
    assert srv.filter == startup and srv.aas is False
    assert [next(iter(d)) for d in srv.sent].count("setAuditConfig") == 1


def test_guard_restores_exact_original_config() -> None:
    original = {"atype": {"$in": ["authenticate", "authCheck"]}}
    srv = _server("8.0.4", filt=original, aas=True)
    strat = make_strategy("mongodb-runtime", client=srv, options={})
    with pytest.raises(RuntimeError), audit_guard(strat, stream=io.StringIO()) as entry:
        assert entry.enabled is True
        strat.disable()
        assert srv.filter == NONE_FILTER
        raise RuntimeError("benchmark crashed")
    assert srv.filter == original and srv.aas is True


def test_guard_failed_restore_prints_hint_and_raises() -> None:
    srv = _server("7.0.23", filt={"atype": "authenticate"}, aas=False)
    # the URL names the node db1, which is this simulated server: reach it directly through ``direct``
    # (not over the network, where the connection attempt to db1 waited out its 10 s timeout)
    options = {"url": "mongodb://u:pw@db1:27017/", "direct": lambda _host, cmd: srv.command(cmd)}
    strat = make_strategy("mongodb-runtime", client=srv, options=options)
    err = io.StringIO()
    with pytest.raises(AuditError, match="audit was not restored") as caught, audit_guard(strat, stream=err):
        strat.enable(OPS)
        srv.fail_sets = True
        raise KeyboardInterrupt
    text = err.getvalue()
    assert "AUDIT NOT RESTORED" in text and "pw" not in text
    assert (
        'db.adminCommand(EJSON.parse("{\\"setAuditConfig\\": 1, '
        '\\"filter\\": {\\"atype\\": \\"authenticate\\"}' in text
    )
    chain, exc = [], caught.value.__context__
    while exc is not None:
        chain.append(type(exc))
        exc = exc.__context__
    assert chain[0] is AuditError and chain[-1] is KeyboardInterrupt  # restore failure, then what ended it


def test_the_baseline_off_measures_is_named_per_mode() -> None:
    runtime = make_strategy("mongodb-runtime", client=_server("7.0.23"), options={})
    assert runtime.baseline.startswith("audit: off = runtime filter that matches nothing")
    bi = {"version": "6.0.12-9", "psmdbVersion": "6.0.12-9", "modules": []}
    percona = SimulatedAuditServer(bi, {"parsed": {"auditLog": {"destination": "file"}}}, RS)
    param = make_strategy("mongodb-runtime", client=percona, options={})
    assert param.baseline.startswith("audit: off = auditAuthorizationSuccess false")
    assert "restart without auditLog" not in runtime.baseline + param.baseline

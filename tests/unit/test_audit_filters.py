"""Startup audit filters as mongod parses them, and what they admit of YCSB's commands.

The filter texts are written the way the documentation writes them in config files and on the command
line: MongoDB manual, "Configure Audit Filters" (``{ atype: { $in: [ "createCollection", "dropCollection" ]
} }``, ``{ atype: "authCheck", "param.command": { $in: [ "find", "insert", "delete", "update",
"findandmodify" ] } }``, ``{ roles: { role: "readWrite", db: "test" } }``), and Percona's "Audit logging"
page (unquoted keys, ``/regex/`` literals, single quotes). mongod's own JSON reader
(``src/mongo/bson/json.cpp``) accepts that syntax, so the tool must too -- and must never assume that
an unreadable filter covers CRUD.
"""

from __future__ import annotations

import pytest
from bson.regex import Regex

from ycsb_runner.audit import AuditError, make_strategy
from ycsb_runner.audit.filters import CANNOT_VERIFY, FilterSyntaxError, coverage, parse_filter
from ycsb_runner.audit.mongodb_runtime import Mode, state_from_config

CRUD = ["find", "getMore", "insert", "update", "delete"]


def test_lenient_syntax_is_parsed_as_mongod_does() -> None:
    assert parse_filter('{ atype: { $in: [ "createCollection", "dropCollection" ] } }') == {
        "atype": {"$in": ["createCollection", "dropCollection"]}
    }
    assert parse_filter("{ atype: 'authCheck', 'param.command': { $in: ['find', 'insert'] } }") == {
        "atype": "authCheck",
        "param.command": {"$in": ["find", "insert"]},
    }
    doc = parse_filter(r'{ atype: "authCheck", "param.ns": /^ycsb\./i, n: NumberInt(3), x: null }')
    assert doc["param.ns"] == Regex(r"^ycsb\.", "i") and doc["n"] == 3 and doc["x"] is None
    assert parse_filter('{"atype": {"$regularExpression": {"pattern": "^auth", "options": ""}}}')[
        "atype"
    ] == Regex("^auth")
    for bad in ("{ atype: ", "{ atype: authCheck }", "[1, 2]", "", "{ a: 1 } trailing", "{ a: /x/q }"):
        with pytest.raises(FilterSyntaxError):
            parse_filter(bad)


def test_coverage_of_documented_filters() -> None:
    crud = parse_filter(
        '{ atype: "authCheck", "param.command": { $in: [ "find", "insert", "delete", '
        '"update", "findandmodify" ] } }'
    )
    cov = coverage(crud, CRUD, "ycsb.usertable")
    assert cov.audited == {"find", "insert", "delete", "update"} and cov.not_audited == {"getMore"}
    ddl = parse_filter('{ atype: { $in: [ "createCollection", "dropCollection" ] } }')
    assert coverage(ddl, CRUD, "ycsb.usertable").audited == frozenset()
    by_role = parse_filter('{ roles: { role: "readWrite", db: "test" } }')  # depends on the client's roles
    assert coverage(by_role, CRUD, None).unknown == set(CRUD)
    regex = parse_filter('{ atype: "authCheck", "param.command": /^(find|update)$/ }')
    assert coverage(regex, CRUD, None).audited == {"find", "update"}
    either = parse_filter(
        '{ $or: [ { atype: "authenticate" }, { atype: "authCheck", "param.ns": /^ycsb\\./ } ] }'
    )
    assert coverage(either, CRUD, "ycsb.usertable").audited == set(CRUD)
    assert coverage(either, CRUD, "other.t").audited == frozenset()
    assert coverage(either, CRUD, None).unknown == set(CRUD)  # where YCSB writes is not known
    nin = parse_filter('{ atype: "authCheck", "param.command": { $nin: ["getMore"] } }')
    assert coverage(nin, CRUD, None).audited == {"find", "insert", "update", "delete"}


def test_unreadable_filter_is_never_on() -> None:
    state = state_from_config(
        "X", Mode.PARAMETER, None, True, filter_problem="auditLog.filter 'x' unreadable"
    )
    assert state.enabled is None and CANNOT_VERIFY in state.detail


class Percona:
    """A Percona Server for MongoDB 7.0 started with a config-file ``auditLog.filter`` (getCmdLineOpts
    returns it as the string in the file, manual "getCmdLineOpts"); auditAuthorizationSuccess is switched
    with setParameter (Percona "Audit logging")."""

    def __init__(self, filter_text: str) -> None:
        self.filter_text, self.aas, self.admin = filter_text, False, self

    def command(self, cmd: object) -> dict:
        doc = {cmd: 1} if isinstance(cmd, str) else dict(cmd)  # type: ignore[arg-type]
        name = next(iter(doc))
        if name == "buildInfo":
            return {"version": "7.0.14-8", "psmdbVersion": "7.0.14-8", "modules": [], "ok": 1}
        if name == "hello":
            return {"isWritablePrimary": True, "ok": 1}
        if name == "getCmdLineOpts":
            return {
                "argv": ["mongod", "--config", "/etc/mongod.conf"],
                "parsed": {"auditLog": {"destination": "file", "format": "JSON", "filter": self.filter_text}},
                "ok": 1,
            }
        if name == "getParameter":
            if "featureCompatibilityVersion" in doc:
                return {"featureCompatibilityVersion": {"version": "7.0"}, "ok": 1}
            return {"auditAuthorizationSuccess": self.aas, "ok": 1}
        if name == "setParameter":
            self.aas = bool(doc["auditAuthorizationSuccess"])
            return {"was": not self.aas, "ok": 1}
        raise AssertionError(name)


def test_relaxed_startup_filter_without_authcheck_does_not_cover_crud() -> None:
    srv = Percona('{ atype: { $in: [ "authenticate", "createUser", "dropUser" ] } }')
    strat = make_strategy("mongodb-runtime", client=srv, options={})
    with pytest.raises(
        AuditError,
        match=r"should be on but .*it is off.*no CRUD.*restart mongod with "
        r"--auditFilter",
    ):
        strat.enable(["insert", "read"])
    assert srv.aas is True  # the switch itself happened; the run is refused because nothing is audited


def test_relaxed_crud_filter_is_understood() -> None:
    srv = Percona('{ atype: "authCheck", "param.command": { $in: [ "find", "insert", "update" ] } }')
    state = make_strategy("mongodb-runtime", client=srv, options={}).enable(["insert", "read", "update"])
    assert state.enabled is True and {"insert", "read", "update"} <= state.ops


def test_filter_that_cannot_be_read_refuses_the_on_label() -> None:
    srv = Percona("{ atype: authCheck }")  # not even mongod's parser takes a bare word
    strat = make_strategy("mongodb-runtime", client=srv, options={})
    with pytest.raises(AuditError, match=CANNOT_VERIFY):
        strat.enable(["read"])
    state = strat.status()
    assert state.enabled is None and CANNOT_VERIFY in state.detail

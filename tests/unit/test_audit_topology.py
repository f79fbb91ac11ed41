"""Topology-aware audit switching, driven through documented server replies (no mongod here).

Every reply below has the shape the MongoDB manual (or the server source) documents:

* ``hello`` -- manual, "hello" command: replica-set members report ``setName``, ``hosts``, ``arbiters``,
  ``primary``, ``me``, ``isWritablePrimary``/``secondary``; mongos reports ``msg: "isdbgrid"``.
* ``replSetGetConfig`` -- manual, "replSetGetConfig" and "Replica Set Configuration":
  ``{config: {_id, version, members: [{_id, host, arbiterOnly, hidden, priority, votes}]}}``.
* ``listShards`` -- manual, "listShards": ``{shards: [{_id, host: "<rs>/<h1>,<h2>", state, topologyTime}]}``.
* ``config.mongos`` -- manual, "Config Database": one document per mongos, ``{_id: "<host>:<port>",
  ping: <date>, up, waiting, mongoVersion}``.
* ``getAuditConfig`` -- manual, "getAuditConfig": ``{generation: ObjectId, filter,
  auditAuthorizationSuccess}``.
* ``getClusterParameter: "auditConfig"`` -- manual, "getClusterParameter" / "auditConfig":
  ``{clusterParameters: [{_id: "auditConfig", clusterParameterTime: Timestamp, filter,
  auditAuthorizationSuccess}]}``.
* ``getParameter`` -- manual, "getParameter": ``{<name>: <value>, ok: 1}``;
  ``featureCompatibilityVersion`` nests as ``{featureCompatibilityVersion: {version: "7.0"}}`` (manual,
  "setFeatureCompatibilityVersion", "Get FeatureCompatibilityVersion"); ``auditConfigPollingFrequencySecs``
  is a mongos parameter (manual, "MongoDB Server Parameters", auditing).
* ``getCmdLineOpts`` -- manual, "getCmdLineOpts": ``{argv, parsed: {auditLog: {...}}}``.
* Errors: ``setAuditConfig`` on a data-bearing shard fails with NotImplemented (238) "setAuditConfig is
  not implemented on data bearing shards" (Enterprise ``audit_mongod.cpp``); OCSF ``auditLog.schema``
  (manual 8.0, "auditLog.schema").
* Hidden members have priority 0 and are not in ``hello``; delayed members are hidden too and apply
  the oplog ``secondaryDelaySecs`` late (manual, "Configure a Hidden / Delayed Replica Set Member").
* ``getClusterParameter`` on mongos (FCV 7.1+) returns the config server's durable value (manual,
  "getClusterParameter"): a mongos that has not refreshed cannot be observed that way.

The simulation models what the research note says about propagation: a runtime config set through the
entry node reaches the other nodes after some reads (mongos poll ``auditConfigPollingFrequencySecs``,
members replicate); ``setParameter`` changes only the process it runs on.
"""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from typing import Any

import pytest
from bson import ObjectId
from bson.timestamp import Timestamp
from pymongo.errors import AutoReconnect, OperationFailure

from ycsb_runner.audit import AuditError, audit_guard, make_strategy
from ycsb_runner.audit.mongodb_runtime import NONE_FILTER
from ycsb_runner.audit.topology import live_mongos, parse_shard_host, replset_hosts
from ycsb_runner.errors import UserError

ORIGINAL = {"atype": {"$in": ["authenticate", "createCollection"]}}  # the deployment's own filter
OPS = ["insert", "read", "update"]
NOW = datetime(2026, 12, 1, 7, 0, 0)


class Node:
    def __init__(self, host: str, role: str, *, shard: str | None = None) -> None:
        self.host, self.role, self.shard = host, role, shard
        self.seen: tuple[Any, bool] = (ORIGINAL, True)  # (filter, auditAuthorizationSuccess) it applies
        self.lag = 0  # reads before it picks up the cluster-wide config
        self.hidden = False
        self.delay_s = 0.0  # secondaryDelaySecs: applies the oplog (and so a runtime config) this late
        self.stuck = False
        self.down = False
        self.received: list[dict[str, Any]] = []


class Deployment:
    """A standalone, a 3-member replica set (primary, secondary, hidden secondary, plus an arbiter: the
    Alibaba study's set) or a 2-shard cluster of such sets with 2 mongos. ``delay_s`` makes the hidden
    members delayed (``secondaryDelaySecs``). Time is simulated: ``clock``/``sleep`` are given to the
    strategy, so a 20 s delay takes no real time."""

    def __init__(
        self, kind: str, mode: str, *, lag: int = 0, fcv: str | None = None, delay_s: float = 0.0
    ) -> None:
        self.kind, self.mode = kind, mode
        self.now = 0.0  # simulated monotonic seconds
        self.set_at = -1e9  # when the cluster-wide config last changed
        self.version = {
            "setAuditConfig": "7.0.14",
            "setClusterParameter": "8.0.4",
            "setParameter": "7.0.14-8",
        }[mode]
        self.fcv = fcv or ".".join(self.version.split(".")[:2])
        self.cluster: tuple[Any, bool] = (ORIGINAL, True)
        self.nodes: dict[str, Node] = {}
        if kind == "standalone":
            self._add("db1:27017", "standalone")
        elif kind == "replicaset":
            for i, role in enumerate(["primary", "secondary", "secondary"]):
                self._add(f"rs{i}:27017", role)
        else:
            for s in ("shard01", "shard02"):
                for i, role in enumerate(["primary", "secondary", "secondary"]):
                    self._add(f"{s}-{i}:27018", role, shard=s)
            self._add("mongos1:27017", "mongos")
            self._add("mongos2:27017", "mongos")
        for node in self.nodes.values():
            node.lag = lag
            if node.host.endswith("-2:27018") or node.host == "rs2:27017":
                # manual, "Configure a Hidden Replica Set Member": hidden members have priority 0;
                # "Configure a Delayed Replica Set Member": delayed members are hidden, priority 0
                node.hidden, node.delay_s = True, delay_s
            if mode == "setParameter":  # Percona: CRUD filter at startup, auditAuthorizationSuccess off
                node.seen = (ORIGINAL, False)
        self.entry = self.nodes["mongos1:27017"] if kind == "sharded" else next(iter(self.nodes.values()))
        self.admin = self  # pymongo's client.admin.command

    def _add(self, host: str, role: str, shard: str | None = None) -> None:
        self.nodes[host] = Node(host, role, shard=shard)

    # -- documented replies
    def _hello(self, node: Node) -> dict[str, Any]:
        if node.role == "mongos":
            return {"isWritablePrimary": True, "msg": "isdbgrid", "maxWireVersion": 21, "ok": 1}
        if node.role == "standalone":
            return {"isWritablePrimary": True, "maxWireVersion": 21, "ok": 1}
        members = [n for n in self.nodes.values() if n.shard == node.shard]
        primary = next(n.host for n in members if n.role == "primary")
        set_name = node.shard or "rs0"
        # manual, "hello" (replica sets): ``hosts`` lists the members that are neither hidden, arbiters
        # nor priority 0 (those are ``passives``); hidden members are listed nowhere in hello
        return {
            "isWritablePrimary": node.role == "primary",
            "secondary": node.role == "secondary",
            "setName": set_name,
            "hosts": [n.host for n in members if not n.hidden],
            "arbiters": [f"{set_name}-arb:27017"],
            "primary": primary,
            "me": node.host,
            "maxWireVersion": 21,
            "ok": 1,
        }

    def _config(self, node: Node) -> dict[str, Any]:
        members = [n for n in self.nodes.values() if n.shard == node.shard and n.role != "mongos"]
        # manual, "Replica Set Configuration": members[n].{_id, host, arbiterOnly, hidden, priority,
        # votes, secondaryDelaySecs (5.0+)}; a hidden member must have priority 0
        rows = [
            {
                "_id": i,
                "host": n.host,
                "arbiterOnly": False,
                "hidden": n.hidden,
                "priority": 0 if n.hidden else 1,
                "secondaryDelaySecs": int(n.delay_s),
                "votes": 1,
            }
            for i, n in enumerate(members)
        ]
        rows.append(
            {
                "_id": len(rows),
                "host": f"{node.shard or 'rs0'}-arb:27017",
                "arbiterOnly": True,
                "hidden": False,
                "priority": 0,
                "votes": 1,
            }
        )
        return {"config": {"_id": node.shard or "rs0", "version": 3, "members": rows}, "ok": 1}

    def _audit_log(self) -> dict[str, Any]:
        if self.mode == "setParameter":
            return {
                "destination": "file",
                "format": "JSON",
                "path": "/data/audit.json",
                "filter": '{ atype: "authCheck", "param.command": { $in: ["find", "insert", "update"] } }',
            }
        return {
            "destination": "file",
            "format": "JSON",
            "path": "/data/audit.json",
            "runtimeConfiguration": True,
        }

    def _state(self, node: Node) -> tuple[Any, bool]:
        if self.mode == "setParameter":
            return node.seen
        if node.delay_s and self.now < self.set_at + node.delay_s:
            return node.seen  # the oplog entry of the change is applied only after the delay
        if node is not self.entry and node.seen != self.cluster and not node.stuck:
            if node.lag <= 0:
                node.seen = self.cluster
            node.lag -= 1
        return self.cluster if node is self.entry else node.seen

    def run(self, node: Node, cmd: Any) -> dict[str, Any]:
        doc = {cmd: 1} if isinstance(cmd, str) else dict(cmd)
        name = next(iter(doc))
        node.received.append(doc)
        if node.down:
            raise AutoReconnect(f"{node.host}: connection refused")
        if name == "buildInfo":
            # manual, "buildInfo": version, modules (["enterprise"]); Percona adds psmdbVersion
            return {
                "version": self.version,
                "modules": [] if self.mode == "setParameter" else ["enterprise"],
                **({"psmdbVersion": self.version} if self.mode == "setParameter" else {}),
                "ok": 1,
            }
        if name == "hello":
            return self._hello(node)  # manual, "hello" (see _hello)
        if name == "replSetGetConfig":
            # manual, "replSetGetConfig"; without --replSet: NoReplicationEnabled (76)
            if node.role in ("mongos", "standalone"):
                raise OperationFailure("not running with --replSet", 76, {"codeName": "NoReplicationEnabled"})
            return self._config(node)
        if name == "listShards":
            # manual, "listShards": {shards: [{_id, host: "<rs>/<h1>,<h2>", state, topologyTime}]}
            shards = sorted({n.shard for n in self.nodes.values() if n.shard})
            return {
                "shards": [
                    {
                        "_id": s,
                        "host": f"{s}/" + ",".join(n.host for n in self.nodes.values() if n.shard == s),
                        "state": 1,
                        "topologyTime": Timestamp(1700000000, 1),
                    }
                    for s in shards
                ],
                "ok": 1,
            }
        if name == "getCmdLineOpts":
            # manual, "getCmdLineOpts": {argv, parsed: <the parsed config file and options>}
            return {"argv": ["mongod"], "parsed": {"auditLog": self._audit_log()}, "ok": 1}
        if name == "getParameter":
            # manual, "getParameter": {<name>: <value>, ok: 1}; featureCompatibilityVersion nests as
            # {version: "7.0"} and mongos has none (InvalidOptions, "no option found to get")
            if "featureCompatibilityVersion" in doc:
                if node.role == "mongos":
                    raise OperationFailure("no option found to get", 72, {"codeName": "InvalidOptions"})
                return {"featureCompatibilityVersion": {"version": self.fcv}, "ok": 1}
            if "auditConfigPollingFrequencySecs" in doc:
                return {"auditConfigPollingFrequencySecs": 5, "ok": 1}
            return {"auditAuthorizationSuccess": self._state(node)[1], "ok": 1}
        if name == "setParameter":
            # manual, "setParameter": changes this process only; replies {was: <old value>, ok: 1}
            was = node.seen[1]
            node.seen = (node.seen[0], bool(doc["auditAuthorizationSuccess"]))
            return {"was": was, "ok": 1}
        if name == "getAuditConfig":
            # manual, "getAuditConfig": members apply the change via the oplog; mongos polls
            # (auditConfigPollingFrequencySecs) and may show stale data until it has polled
            filt, aas = self._state(node)
            return {"generation": ObjectId(), "filter": filt, "auditAuthorizationSuccess": aas, "ok": 1}
        if name == "getClusterParameter":
            # manual, "getClusterParameter": on mongos (FCV 7.1+) it returns the config server's durable
            # value, so a mongos that has not refreshed its own copy yet cannot be seen this way
            filt, aas = self.cluster if node.role == "mongos" else self._state(node)
            return {
                "clusterParameters": [
                    {
                        "_id": "auditConfig",
                        "clusterParameterTime": Timestamp(1700000000, 2),
                        "filter": filt,
                        "auditAuthorizationSuccess": aas,
                    }
                ],
                "ok": 1,
            }
        if name == "setAuditConfig":
            if node.shard is not None:
                # Enterprise audit_mongod.cpp (uassertSetAuditConfigAllowed): ErrorCodes::NotImplemented
                # (238), "setAuditConfig is not implemented on data bearing shards"
                raise OperationFailure(
                    "setAuditConfig is not implemented on data bearing shards",
                    238,
                    {
                        "codeName": "NotImplemented",
                        "errmsg": "setAuditConfig is not implemented on data bearing shards",
                    },
                )
            self.cluster, self.set_at = (doc["filter"], doc["auditAuthorizationSuccess"]), self.now
            return {"ok": 1}
        if name == "setClusterParameter":
            # manual, "setClusterParameter": replica-set primary or mongos; {ok: 1}
            conf = doc[name]["auditConfig"]
            self.cluster, self.set_at = (conf["filter"], conf["auditAuthorizationSuccess"]), self.now
            return {"ok": 1}
        # any server: an unknown command is CommandNotFound (59)
        raise OperationFailure(f"no such command {name}", 59, {"codeName": "CommandNotFound"})

    # -- what the strategy is given
    def command(self, cmd: Any) -> dict[str, Any]:  # the entry connection
        return self.run(self.entry, cmd)

    def direct(self, host: str, cmd: Any) -> dict[str, Any]:
        return self.run(self.nodes[host], cmd)

    def mongos_docs(self) -> list[dict[str, Any]]:
        rows = [
            {"_id": n.host, "ping": NOW, "up": 3600, "waiting": True, "mongoVersion": self.version}
            for n in self.nodes.values()
            if n.role == "mongos" and n is not self.entry
        ]
        rows.append({"_id": "old-mongos:27017", "ping": NOW - timedelta(days=30), "up": 1, "waiting": True})
        return rows

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def strategy(self, **options: Any) -> Any:
        opts = {
            "clock": self.clock,
            "sleep": self.sleep,
            "direct": self.direct,
            "mongos_docs": self.mongos_docs,
            "url": "mongodb://admin:pw@" + self.entry.host + "/?authSource=admin",
            "verify_timeout_s": 1.0,
            "verify_poll_s": 0.01,
            "target_namespace": "ycsb.usertable",
            **options,
        }
        return make_strategy("mongodb-runtime", client=self, options=opts)


TOPOLOGIES = ["standalone", "replicaset", "sharded"]
MODES = ["setAuditConfig", "setClusterParameter", "setParameter"]
CASES = [(t, m) for t in TOPOLOGIES for m in MODES if not (t == "standalone" and m == "setClusterParameter")]


def _sets(node: Node) -> list[str]:
    return [next(iter(d)) for d in node.received if next(iter(d)).startswith("set")]


def _reads_after_last_set(dep: Deployment, node: Node) -> bool:
    get = {
        "setAuditConfig": "getAuditConfig",
        "setClusterParameter": "getClusterParameter",
        "setParameter": "getParameter",
    }[dep.mode]
    names = [next(iter(d)) for d in node.received]
    return get in names


def test_pure_parsers_of_documented_replies() -> None:
    assert parse_shard_host("shard01/a:27018,b:27018") == ("shard01", ["a:27018", "b:27018"])
    assert parse_shard_host("lone:27018") == (None, ["lone:27018"])
    dep = Deployment("replicaset", "setAuditConfig")
    node = dep.nodes["rs0:27017"]
    assert replset_hosts(dep._hello(node), dep._config(node)) == ["rs0:27017", "rs1:27017", "rs2:27017"]
    assert replset_hosts(dep._hello(node)) == ["rs0:27017", "rs1:27017"]  # hello: no hidden, no arbiter
    sharded = Deployment("sharded", "setAuditConfig")
    assert live_mongos(sharded.mongos_docs()) == ["mongos2:27017"]  # a month-old ping is a gone mongos


@pytest.mark.parametrize(("kind", "mode"), CASES)
def test_switch_reaches_and_verifies_every_node(kind: str, mode: str) -> None:
    dep = Deployment(kind, mode, lag=2)  # other nodes pick the change up after two reads
    strat = dep.strategy()
    expected_nodes = {"standalone": 1, "replicaset": 3, "sharded": 8}[kind]
    assert len(strat.topology.nodes) == expected_nodes  # arbiters and the stale mongos are not listed
    with audit_guard(strat, stream=io.StringIO()) as entry:
        # the deployment's own filter audits no authCheck (runtime modes); Percona starts with
        # auditAuthorizationSuccess false: either way, no CRUD is audited before the switch
        assert entry.enabled is False
        on = strat.enable(OPS)
        for node in dep.nodes.values():
            if mode == "setParameter":  # changes only the process it runs on: sent to every node
                assert _sets(node) == ["setParameter"], node.host
            elif node is dep.entry:
                assert _sets(node) == [mode]  # once, through the primary / a mongos
            else:
                assert _sets(node) == [], node.host  # never on shards or secondaries
            assert _reads_after_last_set(dep, node), f"{node.host} was not read back"
        assert on.enabled is True and {"insert", "read", "update"} <= on.ops
        assert sorted(n["node"] for n in on.nodes) == sorted(dep.nodes)
        assert all(n["verified"] and n["state"] == "on" for n in on.nodes)
        for node in dep.nodes.values():
            node.received.clear()
    # restore reaches the same nodes and every node reads back the starting configuration
    for node in dep.nodes.values():
        if mode == "setParameter":
            assert _sets(node) == ["setParameter"] and node.seen[1] is False, node.host
        else:
            assert _sets(node) == ([mode] if node is dep.entry else [])
            assert dep._state(node) == (ORIGINAL, True), node.host
        assert _reads_after_last_set(dep, node)


def test_entry_state_is_not_on_for_crud_with_a_filter_without_authcheck() -> None:
    dep = Deployment("replicaset", "setAuditConfig")
    state = dep.strategy().status()
    assert state.enabled is False and "no CRUD" in state.detail


@pytest.mark.parametrize(("kind", "mode"), [c for c in CASES if c[0] != "standalone"])
def test_a_node_that_keeps_the_old_state_blocks_the_run_by_name(kind: str, mode: str) -> None:
    dep = Deployment(kind, mode)
    strat = dep.strategy(verify_timeout_s=0.2)  # the laggard never catches up: a short bound will do
    laggard = dep.nodes["shard02-2:27018" if kind == "sharded" else "rs2:27017"]
    laggard.stuck = True
    if mode == "setParameter":  # the process did not take it (e.g. restarted meanwhile)
        real = dep.run

        def run(node: Node, cmd: Any) -> dict[str, Any]:
            if node is laggard and isinstance(cmd, dict) and "setParameter" in cmd:
                node.received.append(dict(cmd))
                return {"was": True, "ok": 1}
            return real(node, cmd)

        dep.run = run  # type: ignore[method-assign]
    with pytest.raises(AuditError) as caught:
        strat.enable(OPS)
    message = str(caught.value)
    assert laggard.host in message and "the run does not start" in message
    assert "1 of" in message  # only the laggard is named as failing
    record = {n["node"]: n for n in strat.last_nodes}
    assert record[laggard.host]["verified"] is False
    assert all(r["verified"] for h, r in record.items() if h != laggard.host)


def test_unreachable_member_blocks_the_run_by_name() -> None:
    dep = Deployment("sharded", "setClusterParameter")
    strat = dep.strategy(verify_timeout_s=0.2)  # the member stays down: a short bound will do
    dep.nodes["mongos2:27017"].down = True
    with pytest.raises(AuditError, match=r"mongos mongos2:27017: .*connection refused"):
        strat.enable(OPS)


def test_wait_bound_comes_from_the_reported_polling_frequency() -> None:
    dep = Deployment("sharded", "setAuditConfig")
    assert dep.strategy(verify_timeout_s=None).verify_timeout_s == 5 + 30  # 5 s reported + margin
    assert Deployment("standalone", "setAuditConfig").strategy(verify_timeout_s=None).verify_timeout_s == 0


def test_restore_file_commands_reach_every_node_in_setparameter_mode() -> None:
    dep = Deployment("sharded", "setParameter")
    strat = dep.strategy()
    entry = strat.status()
    commands = strat.restore_commands(entry)
    assert sorted(url.split("@")[1].split("/")[0] for url, _ in commands) == sorted(dep.nodes)
    assert all("directConnection=true" in url and "pw" not in url for url, _ in commands)
    assert all(cmd == {"setParameter": 1, "auditAuthorizationSuccess": False} for _, cmd in commands)
    hint = strat.manual_restore_hint(entry)
    assert hint.count("mongosh") == len(dep.nodes) and "EJSON.parse(" in hint


def test_fcv_below_7_1_on_an_8_0_binary_is_refused_before_any_change() -> None:
    dep = Deployment("replicaset", "setClusterParameter", fcv="7.0")
    with pytest.raises(UserError, match="feature compatibility version 7.0.*CommandNotSupported"):
        dep.strategy()
    assert not any(_sets(n) for n in dep.nodes.values())


def test_fcv_read_from_a_shard_member_when_mongos_has_none() -> None:
    dep = Deployment("sharded", "setClusterParameter", fcv="7.0")
    with pytest.raises(UserError, match="feature compatibility version 7.0"):
        dep.strategy()


def test_atlas_is_refused_with_its_api() -> None:
    dep = Deployment("replicaset", "setAuditConfig")
    dep.nodes = {
        f"c0-shard-00-0{i}.abcde.mongodb.net:27017": Node(f"c0-shard-00-0{i}.abcde.mongodb.net:27017", r)
        for i, r in enumerate(["primary", "secondary", "secondary"])
    }
    dep.entry = next(iter(dep.nodes.values()))
    with pytest.raises(UserError, match="Atlas.*auditLog"):
        dep.strategy()


def test_ocsf_schema_is_refused_with_the_reason() -> None:
    dep = Deployment("replicaset", "setClusterParameter")
    real = dep._audit_log
    dep._audit_log = lambda: {**real(), "schema": "OCSF"}  # type: ignore[method-assign]
    with pytest.raises(UserError, match="OCSF.*no atype/param fields"):
        dep.strategy()
    assert not any(_sets(n) for n in dep.nodes.values())


def test_upsert_changes_the_audited_commands() -> None:
    dep = Deployment("replicaset", "setAuditConfig")
    strat = dep.strategy(upsert=True)
    strat.enable(["insert"])
    assert dep.cluster[0]["param.command"] == {"$in": ["update"]}  # replaceOne(upsert) is an update
    plain = Deployment("replicaset", "setAuditConfig")
    plain.strategy().enable(["insert"])
    assert plain.cluster[0]["param.command"] == {"$in": ["insert"]}


def test_disable_sets_the_none_filter_never_empty() -> None:
    dep = Deployment("sharded", "setAuditConfig")
    dep.strategy().disable()
    assert dep.cluster == (NONE_FILTER, False)


@pytest.mark.parametrize("mode", MODES)
def test_restore_file_of_a_killed_run_restores_every_node(mode: str, tmp_path: Any) -> None:
    """The runner died after switching (no guard exit): a new process reads the restore file, finds the
    nodes again and puts each one back."""
    from ycsb_runner.audit.restore_file import load_restore_file, restore_document, write_restore_file

    dep = Deployment("sharded", mode)
    first = dep.strategy()
    entry = first.status()
    write_restore_file(tmp_path / "audit-restore.json", restore_document(first, entry))
    first.enable(OPS)  # ... and the process is killed here
    assert all(dep._state(n)[1] is True for n in dep.nodes.values())
    _, document, saved = load_restore_file(tmp_path)
    assert document["strategy"] == "mongodb-runtime" and "pw" not in str(document)
    restored = dep.strategy().restore(saved)  # the `audit restore RUN_DIR` process
    assert all(n["verified"] for n in restored.nodes) and len(restored.nodes) == len(dep.nodes)
    for node in dep.nodes.values():
        assert dep._state(node) == ((ORIGINAL, True) if mode != "setParameter" else (ORIGINAL, False))


# ---------------------------------------------------------------- hidden and delayed members


def _refuse_replset_config(dep: Deployment) -> None:
    """replSetGetConfig refused as a real server refuses a user without the privilege (manual,
    "replSetGetConfig": requires the replSetGetConfig action on the cluster; the server answers code 13
    Unauthorized, "not authorized on admin to execute command ...")."""
    real = dep.run

    def run(node: Node, cmd: Any) -> dict[str, Any]:
        if isinstance(cmd, dict) and "replSetGetConfig" in cmd:
            node.received.append(dict(cmd))
            raise OperationFailure(
                "not authorized on admin to execute command { replSetGetConfig: 1 }",
                13,
                {"codeName": "Unauthorized", "errmsg": "not authorized on admin to execute command"},
            )
        return real(node, cmd)

    dep.run = run  # type: ignore[method-assign]


@pytest.mark.parametrize("kind", ["replicaset", "sharded"])
def test_hidden_members_are_listed_switched_and_verified(kind: str) -> None:
    dep = Deployment(kind, "setAuditConfig")
    hidden = [n for n in dep.nodes.values() if n.hidden]
    assert hidden and all(h.host not in dep._hello(h)["hosts"] for h in hidden)  # hello never lists them
    strat = dep.strategy()
    listed = {n.host: n for n in strat.topology.nodes}
    assert all(listed[h.host].hidden and "hidden secondary" in listed[h.host].label for h in hidden)
    on = strat.enable(OPS)
    rows = {r["node"]: r for r in on.nodes}
    assert all(rows[h.host]["verified"] and rows[h.host]["state"] == "on" for h in hidden)


@pytest.mark.parametrize("kind", ["replicaset", "sharded"])
def test_refused_replsetgetconfig_is_a_one_line_refusal_naming_the_privilege(kind: str) -> None:
    dep = Deployment(kind, "setAuditConfig")
    _refuse_replset_config(dep)
    with pytest.raises(UserError) as caught:
        dep.strategy()
    message = str(caught.value)
    assert "\n" not in message
    assert "replSetGetConfig was refused (Unauthorized" in message
    assert "the replSetGetConfig action on the cluster" in message and "clusterMonitor" in message
    assert "--allow-unlisted-members" in message
    assert not any(_sets(n) for n in dep.nodes.values())  # refused before anything changed


def test_allow_unlisted_members_goes_on_with_what_hello_lists_and_warns() -> None:
    dep = Deployment("replicaset", "setAuditConfig")
    _refuse_replset_config(dep)
    lines: list[str] = []
    strat = dep.strategy(allow_unlisted_members=True, log=lines.append)
    assert [n.host for n in strat.topology.nodes] == ["rs0:27017", "rs1:27017"]  # the hidden rs2 is missing
    assert len(lines) == 1 and lines[0].startswith("audit: WARNING: replica set rs0: replSetGetConfig")
    assert "rs0:27017, rs1:27017" in lines[0] and "neither switched nor verified" in lines[0]


@pytest.mark.parametrize("mode", ["setAuditConfig", "setClusterParameter"])
def test_a_delayed_member_is_verified_after_its_delay_and_the_wait_is_said(mode: str) -> None:
    dep = Deployment("replicaset", mode, delay_s=20)
    lines: list[str] = []
    strat = dep.strategy(verify_timeout_s=1.0, verify_poll_s=0.5, log=lines.append)  # bound 1 s + delay
    delayed = next(n for n in strat.topology.nodes if n.delay_s)
    assert delayed.host == "rs2:27017" and delayed.delay_s == 20 and strat.node_wait_s(delayed) == 21
    on = strat.enable(OPS)
    assert 20 <= dep.now <= 21  # simulated seconds: it took the delay, and no longer than delay + bound
    assert all(r["verified"] for r in on.nodes)
    waiting = [line for line in lines if "waiting up to 21 s for delayed (20 s) secondary rs2:27017" in line]
    assert len(waiting) == 1 and "report audit on" in waiting[0] and "secondaryDelaySecs 20" in waiting[0]
    assert any("rs2:27017 verified after 20 s" in line for line in lines)


def test_a_lagging_member_without_a_delay_fails_at_the_bound_not_after_the_delay() -> None:
    dep = Deployment("replicaset", "setAuditConfig", delay_s=20)
    dep.nodes["rs1:27017"].stuck = True  # a plain secondary that never applies the change
    strat = dep.strategy(verify_timeout_s=1.0, verify_poll_s=0.5, log=lambda _l: None)
    with pytest.raises(AuditError, match=r"not verified on 1 of 3 node\(s\) after 1s.*secondary rs1:27017"):
        strat.enable(OPS)
    assert dep.now < 2  # the delayed member's longer bound did not hold the failing one back


def test_setauditconfig_through_a_shard_member_says_to_connect_through_mongos() -> None:
    dep = Deployment("sharded", "setAuditConfig")
    dep.entry = dep.nodes["shard01-0:27018"]  # the user's URL names a shard's primary, not a mongos
    strat = dep.strategy()
    assert strat.topology.kind == "replicaset"  # a shard member looks like a replica set
    with pytest.raises(AuditError) as caught:
        strat.enable(OPS)
    message = str(caught.value)
    assert "not implemented on data bearing shards" in message
    assert "connect --mongodb-url to a mongos" in message


def test_mongos_read_back_of_the_cluster_parameter_is_labelled_the_durable_value() -> None:
    dep = Deployment("sharded", "setClusterParameter", lag=3)  # data members replicate late
    strat = dep.strategy()
    on = strat.enable(OPS)
    rows = {r["node"]: r for r in on.nodes}
    for host in ("mongos1:27017", "mongos2:27017"):
        assert "config server's durable value" in rows[host]["detail"], rows[host]
    assert all("durable" not in r["detail"] for h, r in rows.items() if not h.startswith("mongos"))


def test_audit_restore_allow_unlisted_members(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 23: `audit restore` refuses, as bench and `audit on|off|status` do, when replSetGetConfig is
    refused, and goes on with --allow-unlisted-members: the listed members are put back, the warning names
    them and the hidden member (which hello does not list) is left as it was."""
    from contextlib import contextmanager

    from typer.testing import CliRunner

    import ycsb_runner.cli.audit as cli_audit
    from ycsb_runner.audit.restore_file import restore_document, write_restore_file
    from ycsb_runner.cli import app

    dep = Deployment("replicaset", "setAuditConfig")
    first = dep.strategy()
    write_restore_file(tmp_path / "audit-restore.json", restore_document(first, first.status()))
    first.enable(OPS)  # ... and the run is killed here
    _refuse_replset_config(dep)
    given: list[dict[str, Any]] = []

    @contextmanager
    def strategy(name: Any, url: Any, options: dict[str, Any], timeout: Any):
        given.append(options)
        yield dep.strategy(**options)

    monkeypatch.setattr(cli_audit, "_strategy", strategy)
    args = [
        "audit",
        "restore",
        str(tmp_path),
        "--mongodb-url",
        "mongodb://admin:pw@rs0:27017/?authSource=admin",
    ]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code != 0 and "--allow-unlisted-members" in str(refused.exception)
    assert dep._state(dep.nodes["rs0:27017"])[1] is True  # nothing restored
    done = CliRunner().invoke(app, [*args, "--allow-unlisted-members"])
    assert done.exit_code == 0, done.output
    assert [o["allow_unlisted_members"] for o in given] == [False, True]
    assert "audit restored (mongodb-runtime)" in done.stdout
    assert "replSetGetConfig" in done.output and "rs0:27017, rs1:27017" in done.output  # the warning
    assert dep._state(dep.nodes["rs0:27017"]) == (ORIGINAL, True)

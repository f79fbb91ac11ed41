"""The direct-connection plumbing, for real: three embedded FerretDB servers stand in for the members a
``replSetGetConfig`` reply lists, plus one listed member where nothing listens.

FerretDB has no audit log, but it answers ``hello``, ``serverStatus`` (with its ``pid``) and
``getParameter`` (``featureCompatibilityVersion``; ``auditAuthorizationSuccess`` is refused with
InvalidOptions). So this shows, over real sockets, that the strategy opens one direct connection per
listed member, that each command lands on that member's process, and that a member that cannot be read
blocks the run with its name.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ycsb_runner.audit import AuditError
from ycsb_runner.audit.mongodb_runtime import Mode, MongoRuntimeStrategy, _read_fcv, detect_server
from ycsb_runner.audit.topology import DirectConnections, discover
from ycsb_runner.install import embedded as srv

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def members() -> Iterator[list[srv.ServerInfo]]:
    started: list[srv.ServerInfo] = []
    try:
        for _ in range(3):
            started.append(srv.start(record=False, log=lambda _m: None))
        yield started
    finally:
        for info in started:
            srv.stop(info)


def _hosts(members: list[srv.ServerInfo]) -> list[str]:
    return [f"127.0.0.1:{m.port}" for m in members]


def _replset_config(hosts: list[str]) -> dict:
    """replSetGetConfig's documented shape (manual: replSetGetConfig), listing these hosts + an arbiter.
    The third member is hidden, so priority 0 (manual, "Configure a Hidden Replica Set Member": a hidden
    member must have priority 0; a config with a hidden priority-1 member is rejected)."""
    rows = [
        {
            "_id": i,
            "host": h,
            "arbiterOnly": False,
            "hidden": i == 2,
            "priority": 0 if i == 2 else 1,
            "votes": 1,
        }
        for i, h in enumerate(hosts)
    ]
    rows.append({"_id": 9, "host": "127.0.0.1:1", "arbiterOnly": True, "priority": 0, "votes": 1})
    return {"config": {"_id": "rs0", "version": 1, "members": rows}, "ok": 1}


def test_one_direct_connection_per_listed_member(members: list[srv.ServerInfo]) -> None:
    hosts = _hosts(members)
    conns = DirectConnections(members[0].url, timeout_ms=5000)
    try:
        hello = {"isWritablePrimary": True, "setName": "rs0", "hosts": hosts[:2], "primary": hosts[0]}
        topo = discover(hello, hosts[:1], entry=lambda c: _replset_config(hosts), direct=conns.command)
        assert [n.host for n in topo.nodes] == hosts  # the hidden member too, not the arbiter
        pids = [conns.command(n.host, {"serverStatus": 1})["pid"] for n in topo.nodes]
        assert pids == [m.pid for m in members]  # each command reached that member's own process
        assert all(conns.command(h, {"hello": 1})["isWritablePrimary"] for h in hosts)
        assert _read_fcv(_NoEntry(), topo, conns.command) == "7.0"  # read on a member over its connection
    finally:
        conns.close()


class _NoEntry:
    """An entry connection that cannot answer getParameter (like mongos for featureCompatibilityVersion)."""

    class admin:  # noqa: N801 - pymongo's attribute name
        @staticmethod
        def command(cmd: dict) -> dict:
            from pymongo.errors import OperationFailure

            raise OperationFailure("no option found to get", 72, {"codeName": "InvalidOptions"})


def test_members_that_cannot_be_verified_block_the_run_by_name(members: list[srv.ServerInfo]) -> None:
    dead = f"127.0.0.1:{srv.free_port()}"  # listed, but nothing listens there
    hosts = [*_hosts(members), dead]
    conns = DirectConnections(members[0].url, timeout_ms=1500)
    try:
        hello = {"isWritablePrimary": True, "setName": "rs0", "hosts": hosts, "primary": hosts[0]}
        topo = discover(hello, hosts[:1], entry=lambda c: _replset_config(hosts), direct=conns.command)
        info = detect_server(
            {"version": "7.0.14-8", "psmdbVersion": "7.0.14-8"},
            {"parsed": {"auditLog": {"destination": "file"}}},
            hello,
        )
        strat = MongoRuntimeStrategy(
            _NoEntry(),
            info,
            Mode.PARAMETER,
            url=members[0].url,
            topology=topo,
            direct=conns.command,
            verify_timeout_s=0,
        )
        reads = strat.read_nodes()
        assert [r.node.host for r in reads] == hosts
        for read in reads[:3]:  # real FerretDB replies: getParameter auditAuthorizationSuccess refused
            assert "no option found to get" in read.error and read.node.host in read.error
        assert dead in reads[3].error
        with pytest.raises(AuditError) as caught:
            strat.verify(True, ["read"])
        message = str(caught.value)
        assert "not verified on 4 of 4 node(s)" in message
        assert all(h in message for h in hosts)
    finally:
        conns.close()

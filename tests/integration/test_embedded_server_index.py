"""The embedded FerretDB reads every collection by ``_id`` through an index (issue 37), whoever creates the
collection and whenever: YCSB's load, a collection dropped and loaded again, other databases, a server
restarted on the same data. The plan is FerretDB's own ``explain`` (SQLite's ``EXPLAIN QUERY PLAN`` of the
query it runs); with FerretDB as shipped it is ``SCAN``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pymongo import MongoClient

from ycsb_runner.install import embedded as srv
from ycsb_runner.install.embedded import EmbeddedServer, ServerInfo

pytestmark = pytest.mark.integration

RECORDS = 300


@pytest.fixture()
def own_server(server: ServerInfo) -> Iterator[EmbeddedServer]:
    """A server of this test's own (it is restarted); FerretDB only."""
    if server.kind != "ferretdb":
        pytest.skip("the embedded server is a mongod here: FerretDB's SQLite plans do not apply")
    embedded = EmbeddedServer(log=lambda _m: None)
    embedded.__enter__()
    try:
        yield embedded
    finally:
        embedded.__exit__(None, None, None)


def _plan(client: MongoClient, db: str, collection: str, key: str) -> str:
    """FerretDB's query plan for ``find({_id: key})``, one string."""
    planner = client[db][collection].find({"_id": key}).explain()["queryPlanner"]
    return " | ".join(planner["Plan"])


def _assert_indexed(client: MongoClient, db: str, collection: str) -> list[str]:
    """Every document of the collection is found by its ``_id`` and the lookup's plan searches an index;
    the ids."""
    ids = [d["_id"] for d in client[db][collection].find({}, {"_id": 1})]
    assert ids, f"{db}.{collection} is empty"
    for key in ids[:: max(1, len(ids) // 25)]:
        assert client[db][collection].find_one({"_id": key})["_id"] == key
    plan = _plan(client, db, collection, ids[len(ids) // 2])
    assert "USING INDEX" in plan and "SCAN" not in plan, plan
    return ids


def test_every_collection_is_read_by_id_through_an_index(own_server: EmbeddedServer, run_ycsb) -> None:
    info = own_server.info
    assert info is not None
    load = {"recordcount": RECORDS, "table": "usertable"}
    rc, out, err = run_ycsb("load", load, threads=2, url=info.url)
    assert rc == 0 and "[INSERT], Return=OK, 300" in out, err[-2000:]
    with MongoClient(info.url, serverSelectionTimeoutMS=5000) as client:
        first = _assert_indexed(client, "ycsb", "usertable")
        assert len(first) == RECORDS

        # dropped and loaded again: a new table, still read through an index, the same keys
        client.ycsb.usertable.drop()
        assert "usertable" not in client.ycsb.list_collection_names()
        rc, out, err = run_ycsb("load", load, threads=2, url=info.url)
        assert rc == 0 and "[INSERT], Return=OK, 300" in out, err[-2000:]
        assert sorted(_assert_indexed(client, "ycsb", "usertable")) == sorted(first)

        # another database and collection, made by a driver; FerretDB's own metadata stays as it keeps it
        other = client.other.things
        other.insert_many([{"_id": f"k{i}", "n": i} for i in range(50)])
        _assert_indexed(client, "other", "things")
        assert [ix["name"] for ix in other.list_indexes()] == ["_id_"]
        assert client.other.command("collStats", "things")["count"] == 50
        assert other.count_documents({"n": {"$gte": 40}}) == 10  # a secondary-field query
        assert other.update_one({"_id": "k7"}, {"$set": {"n": -7}}).modified_count == 1
        assert other.find_one({"_id": "k7"})["n"] == -7
        assert other.delete_one({"_id": "k8"}).deleted_count == 1
        assert other.count_documents({}) == 49

    # restarted on the same data (the restart audit strategy): old and new collections alike
    restarted = srv.restart(info, [])
    own_server.info = restarted
    assert restarted.pid != info.pid
    with MongoClient(restarted.url, serverSelectionTimeoutMS=5000) as client:
        assert len(_assert_indexed(client, "ycsb", "usertable")) == RECORDS
        client.ycsb.after_restart.insert_many([{"_id": f"r{i}"} for i in range(20)])
        _assert_indexed(client, "ycsb", "after_restart")

"""The binding's batch inserts (``batchsize`` > 1) through real YCSB 0.17.0 runs on the embedded server.

Against the stock 0.17.0 binding (``mongodb/src/main/java/site/ycsb/db/MongoDbClient.java`` at tag 0.17.0)
the project's binding differs in three batch behaviours, decided one by one (README, "Batch inserts"):

* batched upserts: stock sends ``bulkWrite`` of ``UpdateOneModel(filter, <replacement document>, upsert)``,
  which the driver refuses before sending (an update document holds only ``$`` operators: its
  ``UpdateFieldNameValidator``), so every stock batch upsert returns ERROR; ours sends ``ReplaceOneModel``
  upserts, unordered like the plain batch's ``insertMany``;
* a failed batch: stock keeps the buffer (it is cleared only after a successful write), so the buffer
  never equals ``batchsize`` again and every later insert returns BATCHED_OK with nothing written; ours
  clears it;
* the last partial batch: stock's ``cleanup()`` does not flush it; ours does, unless
  ``mongodb.flush_last_batch=false`` (stock's behaviour, for comparison with published figures).
"""

from __future__ import annotations

import re

import pytest

from ycsb_runner.execute.driver_settings import settings_from_output

pytestmark = pytest.mark.integration

TABLE = "batchtable"
RECORDS = 300


def _returns(out: str, section: str = "INSERT") -> dict[str, int]:
    pattern = rf"^\[{section}\], Return=(\w+), (\d+)$"
    return {name: int(n) for name, n in re.findall(pattern, out, re.M)}


def _commands(mongo) -> dict[str, int]:
    """FerretDB's per-command counters (serverStatus ``metrics.commands.<name>.total``)."""
    metrics = mongo.admin.command("serverStatus")["metrics"]["commands"]
    return {name: int(metrics.get(name, {}).get("total", 0)) for name in ("insert", "update")}


@pytest.fixture()
def table(ycsb, mongo):
    if ycsb.binding_class != "ycsbrunner.binding.MongoDbClient":
        pytest.skip("YCSB_HOME selects the stock binding")
    mongo.ycsb.drop_collection(TABLE)
    yield mongo.ycsb[TABLE]
    mongo.ycsb.drop_collection(TABLE)


@pytest.mark.parametrize("upsert", [False, True], ids=["insert", "upsert"])
@pytest.mark.parametrize("batchsize", [1, 7, 100])
def test_every_record_is_written_for_each_batch_size(run_ycsb, mongo, table, batchsize: int, upsert: bool):
    props = {"recordcount": RECORDS, "batchsize": batchsize, "mongodb.upsert": upsert, "table": TABLE}
    before = _commands(mongo)
    rc, out, err = run_ycsb("load", props, threads=2)
    assert rc == 0, err
    returns = _returns(out)
    assert "ERROR" not in returns and sum(returns.values()) == RECORDS, returns
    # 2 threads of 150 inserts: one OK per written batch (150 // batchsize), the rest BATCHED_OK; the
    # partial batches left at the end (150 % batchsize each) are flushed in cleanup
    assert returns.get("OK", 0) == 2 * (150 // batchsize)
    assert table.count_documents({}) == RECORDS
    sent = {k: v - before[k] for k, v in _commands(mongo).items()}
    if upsert:  # replaceOne / ReplaceOneModel upserts reach the server as update commands
        assert sent["insert"] == 0 and sent["update"] >= RECORDS // batchsize
    else:
        assert sent["update"] == 0 and sent["insert"] >= RECORDS // batchsize
    batch = settings_from_output(err)["batch"]
    assert batch["batchsize"] == batchsize and batch["upsert"] is upsert
    if batchsize == 1:
        assert (
            batch["write"] == ("replaceOne upsert" if upsert else "insertOne") and "last_batch" not in batch
        )
    else:
        assert batch["last_batch"] == "flushed in cleanup"
        assert batch["write"].startswith("bulkWrite of ReplaceOneModel" if upsert else "insertMany")


def test_batch_upserts_replace_existing_documents(run_ycsb, table) -> None:
    props = {"recordcount": RECORDS, "batchsize": 7, "mongodb.upsert": True, "table": TABLE}
    for _ in range(2):  # the second load upserts over every existing document
        rc, out, err = run_ycsb("load", {**props, "fieldcount": 2}, threads=2)
        assert rc == 0, err
        assert "ERROR" not in _returns(out)
    rc, out, err = run_ycsb("load", {**props, "fieldcount": 1}, threads=2)
    assert rc == 0 and "ERROR" not in _returns(out), err
    assert table.count_documents({}) == RECORDS
    assert table.count_documents({"field1": {"$exists": True}}) == 0  # replaced whole, not merged


def test_stock_last_batch_semantics_drop_the_partial_batches(run_ycsb, table) -> None:
    props = {"recordcount": 100, "batchsize": 7, "mongodb.flush_last_batch": False, "table": TABLE}
    rc, out, err = run_ycsb("load", props, threads=3)
    assert rc == 0, err
    returns = _returns(out)
    assert "ERROR" not in returns and sum(returns.values()) == 100  # YCSB counts every insert as done
    # YCSB gives the threads 34, 33 and 33 inserts: 4 full batches each (28), the 6, 5, 5 left are dropped
    assert table.count_documents({}) == 3 * 28
    assert len(re.findall(r"dropped the last insert batch of [56] of table batchtable", err)) == 3
    assert settings_from_output(err)["batch"]["last_batch"] == "dropped, as stock 0.17.0"


def test_batches_after_a_failed_batch_are_still_written(run_ycsb, table) -> None:
    """Keys 200-259 exist before a run whose inserts use keys 200-339 (YCSB's transaction inserts start at
    recordcount): the first 9 batches of 7 fail on duplicate keys, and the next 11 must still be written."""
    base = {"batchsize": 7, "table": TABLE}
    rc, _, err = run_ycsb("load", {**base, "recordcount": 200}, threads=1)
    assert rc == 0, err
    rc, _, err = run_ycsb("load", {**base, "recordcount": 260, "insertstart": 200, "insertcount": 60})
    assert rc == 0, err
    assert table.count_documents({}) == 260
    run = {
        **base,
        "recordcount": 200,
        "operationcount": 140,
        "insertproportion": 1.0,
        "readproportion": 0,
        "updateproportion": 0,
    }
    rc, out, err = run_ycsb("run", run, threads=1)
    assert rc == 0, err
    returns = _returns(out)
    # batches 0-7 (keys 200-255) are all duplicates, batch 8 (256-262) partly: 9 ERROR; 11 written (OK)
    assert returns == {"BATCHED_OK": 120, "ERROR": 9, "OK": 11}, returns
    assert table.count_documents({}) == 340  # 260 + the 80 new keys 260-339 (the unordered batch 8 too)
    assert err.count("insert batch of 7 starting at") == 9

"""The parser on real YCSB 0.17.0 output from the local server, in every measurement type and with
measurement.interval=both: no section lost, and the parsed counts match the documents the server holds."""

from __future__ import annotations

import re

import pytest

from ycsb_runner.parse import parse_output

pytestmark = pytest.mark.integration
N = 150
TYPES = ["hdrhistogram", "histogram", "timeseries", "raw", "hdrhistogram+histogram", "hdrhistogram+raw"]
SECTION = re.compile(r"^\[([^\]]+)\], ", re.M)


def _insert_count(parsed) -> float:
    ops = parsed.operations
    rows = ops[(ops["operation"] == "INSERT") & ops["kind"].isin(["op", "hdr"])]
    return float(rows["operations"].iloc[0])


@pytest.mark.parametrize("mtype", TYPES)
def test_load_in_each_measurement_type(mtype: str, run_ycsb, mongo) -> None:
    mongo.ycsb.drop_collection("usertable")
    rc, out, err = run_ycsb(
        "load", {"recordcount": N, "measurementtype": mtype, "status.interval": 1}, threads=2
    )
    parsed = parse_output(out, err, exit_code=rc, expected_ops=N)
    assert parsed.completion.ok, parsed.completion.reasons
    assert parsed.measurement_type in (None, mtype)
    assert set(SECTION.findall(out)) <= parsed.sections  # no section lost
    assert _insert_count(parsed) == N == mongo.ycsb.usertable.count_documents({})
    if mtype in ("raw", "hdrhistogram+raw"):
        assert len(parsed.raw[parsed.raw["operation"] == "INSERT"]) == N
    assert not parsed.status.empty  # -s status lines were read


def test_interval_both_run_counts_match_server(run_ycsb, mongo) -> None:
    mongo.ycsb.drop_collection("usertable")
    rc, out, err = run_ycsb("load", {"recordcount": N}, threads=2)
    assert parse_output(out, err, exit_code=rc).completion.ok
    props = {
        "recordcount": N,
        "operationcount": 300,
        "readproportion": 0.5,
        "updateproportion": 0,
        "insertproportion": 0.5,
        "measurement.interval": "both",
        "hdrhistogram.percentiles": "50,99.9",
    }
    rc, out, err = run_ycsb("run", props, threads=2)
    parsed = parse_output(out, err, exit_code=rc)
    assert parsed.completion.ok, parsed.completion.reasons
    assert set(SECTION.findall(out)) <= parsed.sections
    ops = parsed.operations
    intended = ops[ops["kind"] == "intended"]
    assert {"READ", "INSERT"} <= set(intended["operation"])
    plain = ops[ops["kind"] == "op"].set_index("operation")
    assert plain.loc["READ", "operations"] + plain.loc["INSERT", "operations"] == 300
    assert mongo.ycsb.usertable.count_documents({}) == N + plain.loc["INSERT", "return_OK"]
    assert {"p50", "p99.9"} <= set(ops.columns)

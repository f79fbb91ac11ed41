"""The runner's audit step: the binding's upsert setting reaches the strategy, per-node results the record.

The strategy is the mongodb-runtime one over a documented 2-shard cluster (tests/test_audit_topology.py),
the suite is the real audit-small suite with overrides, and the step is the one the real plan builds.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest
from test_audit_topology import Deployment

from ycsb_runner.execute.runner import Runner, binding_upserts, step_keys
from ycsb_runner.prepare.plan import build_plan
from ycsb_runner.prepare.suite import load_suite
from ycsb_runner.runs.model import StepRecord

SUITE = str(Path(__file__).parents[1] / "suites" / "audit-small.toml")


def _audit_on_step(overrides: list[str]):
    suite = load_suite(SUITE, ["mixes=insert100", "repetitions=1", *overrides])
    step = next(s for s in build_plan(suite).steps if s.kind == "audit" and s.audit == "on")
    return suite, step


@pytest.mark.parametrize(
    ("overrides", "upsert"),
    [
        ([], False),
        (["mongodb.upsert=true"], True),
    ],
)
def test_binding_upserts_follows_the_suite(overrides: list[str], upsert: bool) -> None:
    suite, step = _audit_on_step(overrides)
    assert binding_upserts(step, suite) is upsert


def test_audit_step_audits_upserts_as_updates_and_records_every_node() -> None:
    suite, step = _audit_on_step(["mongodb.upsert=true"])
    dep = Deployment("sharded", "setClusterParameter")
    strategy = dep.strategy()
    runner = SimpleNamespace(hooks=SimpleNamespace(audit=strategy), suite=suite)
    record = StepRecord(keys=step_keys("r", step, suite), index=step.index)
    Runner._audit_step(runner, step, record)  # type: ignore[arg-type]
    assert dep.cluster[0]["param.command"] == {"$in": ["update"]}  # insert100 with upsert -> update
    assert record.audit_verified == "on"
    nodes = record.audit_nodes
    assert sorted(n["node"] for n in nodes) == sorted(dep.nodes)
    assert all(n["verified"] and n["state"] == "on" for n in nodes)
    assert {n["role"] for n in nodes} == {"primary", "secondary", "mongos"}

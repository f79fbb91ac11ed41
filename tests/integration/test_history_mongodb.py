"""The run history: records read through RunResult, the SQLite store under kills and concurrent writers,
``history rebuild``, ``runs`` filters, and the MongoDB store against the embedded server."""

from __future__ import annotations

import io
import uuid
from pathlib import Path

import pandas as pd
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.history import (
    MongoHistory,
    RunFilter,
    open_history,
    rebuild,
    run_record,
    select_runs,
)
from ycsb_runner.model import RunResult

RUNS = Path(__file__).parents[1] / "data" / "runs"


def test_mongodb_history_on_the_embedded_server(results: Path, mongo_url: str) -> None:
    """Several generators append to one MongoDB history: the same records as SQLite gives."""
    db = f"hist_{uuid.uuid4().hex[:8]}"
    url = mongo_url.rsplit("/", 1)[0] + f"/{db}"
    history = open_history(results, url)
    assert isinstance(history, MongoHistory)
    _, n = rebuild(results, url, log=lambda _m: None)
    assert n == 2
    local, _ = rebuild(results, log=lambda _m: None)
    ids = ["tencent-analyse", "audit-analyse"]
    key = ["run_id", "step", "operation", "metric"]
    mine = history.metrics(ids).sort_values(key).reset_index(drop=True)
    ref = local.metrics(ids).sort_values(key).reset_index(drop=True)
    assert len(mine) == len(ref) > 0
    assert mine["value"].tolist() == ref["value"].tolist()
    got = select_runs(history.runs(), RunFilter(suite="tencent-analyse-tiny"))
    assert got["run_id"].tolist() == ["tencent-analyse"]
    # the CLI through the environment variable, as a team's generators would
    res = CliRunner().invoke(app, ["runs", "-f", "csv"], env={"YCSB_RUNNER_HISTORY_URL": url})
    assert res.exit_code == 0 and set(pd.read_csv(io.StringIO(res.stdout))["run_id"]) == set(ids)
    history.index(run_record(RunResult.load(results / "tencent-analyse")))  # upsert, no duplicate
    assert len(history.runs()) == 2
    history._client.drop_database(db)

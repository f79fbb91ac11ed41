"""End to end: real YCSB 0.17.0 (project binding) against the real embedded server, via run_bench."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pandas as pd
import psutil
import pytest
from pymongo import MongoClient

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.errors import UserError
from ycsb_runner.execute.probe import BASIC_DB

pytestmark = pytest.mark.integration
TINY = str(Path(__file__).parents[1] / "suites" / "tiny.toml")
SECRET = "s3cretPW-4711"


def _with_password(url: str) -> str:
    # FerretDB (SQLite) accepts PLAIN with any password, which lets us follow a real password around.
    sep = "&" if "?" in url else "?"
    return url.replace("mongodb://", f"mongodb://benchuser:{SECRET}@") + f"{sep}authMechanism=PLAIN"


@pytest.fixture(scope="module")
def tiny_run(mongo_url: str, tmp_path_factory: pytest.TempPathFactory):
    """Run the tiny suite once with a password in the URL, watching the argv of every process it starts
    (this process's descendants: the bench runs in it) meanwhile."""
    results = tmp_path_factory.mktemp("results")
    seen_argv: list[str] = []
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            for p in psutil.Process().children(recursive=True):
                try:
                    seen_argv.append(" ".join(p.cmdline()))
                except psutil.Error:  # ended meanwhile
                    continue
            stop.wait(0.3)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        outcome = run_bench(
            BenchOptions(suite=TINY, url=_with_password(mongo_url), results=results, sample_interval_s=1.0),
            log=lambda _m: None,
        )
    finally:
        stop.set()
        t.join()
    return outcome, seen_argv


def test_load_count_matches_server_and_ycsb(tiny_run, mongo_url: str) -> None:
    outcome, _ = tiny_run
    ops = outcome.result.operations
    steps = outcome.result.steps
    load = steps[steps["phase"] == "load"].iloc[0]
    assert load["status"] == "completed"
    assert load["documents"] == 200  # counted on the server right after the load
    inserts = ops[(ops["phase"] == "load") & (ops["operation"] == "INSERT") & (ops["kind"] == "op")]
    assert int(inserts["operations"].iloc[0]) == 200
    assert int(inserts["return_OK"].iloc[0]) == 200


def test_run_phase_counts_add_up(tiny_run) -> None:
    outcome, _ = tiny_run
    ops = outcome.result.operations
    runs = ops[(ops["phase"] == "run") & (ops["kind"] == "op")]
    for mix, group in runs.groupby("mix"):
        main_ops = group[group["operation"].isin(["READ", "UPDATE", "INSERT"])]
        # every run ends by operationcount (600) well before maxexecutiontime
        assert int(main_ops["operations"].sum()) == 600, mix
        assert (main_ops["return_OK"] == main_ops["operations"]).all(), mix


def test_inserts_reach_the_server(tiny_run, mongo_url: str) -> None:
    outcome, _ = tiny_run
    ops = outcome.result.operations
    mine = (ops["mix"] == "read95_insert5") & (ops["operation"] == "INSERT") & (ops["kind"] == "op")
    inserted = ops[mine]["return_OK"].sum()
    assert inserted > 0
    with MongoClient(mongo_url) as c:
        assert c.ycsb.usertable.count_documents({}) == 200 + int(inserted)


def test_documents_have_stock_binding_shape(tiny_run, mongo_url: str) -> None:
    with MongoClient(mongo_url) as c:
        doc = c.ycsb.usertable.find_one()
    assert isinstance(doc["_id"], str) and doc["_id"].startswith("user")
    fields = sorted(k for k in doc if k != "_id")
    assert fields == [f"field{i}" for i in range(10)]
    assert all(isinstance(doc[f], bytes) and len(doc[f]) == 100 for f in fields)


def test_result_files_and_manifest(tiny_run) -> None:
    outcome, _ = tiny_run
    root = outcome.run_dir
    for name in ("manifest.json", "summary.csv", "timeseries.csv", "operations.csv", "steps.csv"):
        assert (root / name).stat().st_size > 0, name
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["ycsb"]["binding_class"] == "ycsbrunner.binding.MongoDbClient"
    assert manifest["ycsb"]["core"] == "core-0.17.0.jar"
    assert manifest["ycsb"]["driver_version"].startswith("5.")
    assert manifest["java"]["version"]
    assert [s["phase"] for s in manifest["steps"]] == ["load", "run", "run"]
    ts = pd.read_csv(root / "timeseries.csv")
    assert set(ts["mix"]) >= {"read50_update50", "read95_insert5"}
    for step in manifest["steps"]:
        d = root / "steps" / step["step"]
        assert (d / "stdout.txt").is_file() and (d / "stderr.txt").is_file()
        # hdrhistogram.fileoutput=true works on Java 17 (needs the JAXB jar on the classpath)
        assert {p.name for p in (d / "hdr").glob("*.hdr")} >= (
            {"INSERT.hdr"} if step["phase"] == "load" else {"READ.hdr"}
        ), step["step"]


def test_password_never_on_argv_or_disk(tiny_run) -> None:
    outcome, seen_argv = tiny_run
    assert any("site.ycsb.Client" in a for a in seen_argv), "the watcher never saw YCSB running"
    assert not [a for a in seen_argv if SECRET in a]
    for path in outcome.run_dir.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert "benchuser:***@" in json.dumps(json.loads((outcome.run_dir / "manifest.json").read_text()))


def test_unreachable_server_is_one_clear_error(tmp_path: Path) -> None:
    url = f"mongodb://benchuser:{SECRET}@127.0.0.1:1/ycsb"
    with pytest.raises(UserError) as err:
        run_bench(BenchOptions(suite=TINY, url=url, results=tmp_path), log=lambda _m: None)
    assert "cannot reach MongoDB" in str(err.value)
    assert SECRET not in str(err.value)
    assert "\n" not in str(err.value)


def test_cli_bad_url_exits_nonzero_without_traceback(tmp_path: Path) -> None:
    env = dict(os.environ, MONGODB_URL=f"mongodb://benchuser:{SECRET}@127.0.0.1:1/ycsb")
    proc = subprocess.run(
        [sys.executable, "-m", "ycsb_runner", "bench", TINY, "--results", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr + proc.stdout
    assert SECRET not in proc.stderr + proc.stdout
    assert "cannot reach MongoDB" in proc.stderr


def test_basicdb_binding_runs_the_suite_without_touching_the_server(mongo_url: str, tmp_path: Path) -> None:
    """bench/overhead_bench.py's client-bound set-up: the same suite on YCSB's no-op binding."""
    outcome = run_bench(
        BenchOptions(
            suite=TINY,
            url=mongo_url,
            results=tmp_path,
            overrides=["mongodb.table=basicdb_check", "properties.basicdb.verbose=false"],
            binding_class=BASIC_DB,
            history=False,
            report=False,
            canaries=False,  # (BasicDB's own capacity: tiny_run measures them)
        ),
        log=lambda _m: None,
    )
    manifest = outcome.result.manifest.to_json()
    assert manifest["ycsb"]["binding_class"] == BASIC_DB
    assert [(s["phase"], s["status"]) for s in manifest["steps"]] == [("load", "completed")] + [
        ("run", "completed")
    ] * 2
    ops = outcome.result.operations
    runs = ops[
        (ops["phase"] == "run") & (ops["kind"] == "op") & ops["operation"].isin(["READ", "UPDATE", "INSERT"])
    ]
    assert runs.groupby("mix")["return_OK"].sum().to_dict() == {"read50_update50": 600, "read95_insert5": 600}
    load = outcome.result.steps.query("phase == 'load'").iloc[0]
    assert load["documents"] == 0  # counted on the server: no insert reached it
    with MongoClient(mongo_url) as c:
        assert c.ycsb.basicdb_check.count_documents({}) == 0
    # basicdb.verbose=false: no line per operation on stdout
    assert (outcome.run_dir / "steps" / manifest["steps"][1]["step"] / "stdout.txt").stat().st_size < 20_000

"""Issue 50: a real bench writes result format 4 (each step's outcome named ``status``), and the typed model
reads back every key it wrote: the manifest loaded and saved again is the same document (nothing the writer
put there is dropped or added)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.runs.model import FORMAT_VERSION, MANIFEST, RunResult, ServerEngine


def test_a_bench_writes_format_4_that_the_model_reads_back_whole(mongo_url: str, tmp_path: Path) -> None:
    outcome = run_bench(
        BenchOptions(
            suite="quick",
            url=mongo_url,
            overrides=["recordcount=100", "maxexecutiontime=2", "mixes=c-read100"],
            results=tmp_path,
            monitors=False,
            report=False,
            canaries=False,
        ),
        log=lambda _m: None,
    )
    written = json.loads((outcome.run_dir / MANIFEST).read_text())
    assert written["format_version"] == FORMAT_VERSION == 4
    steps = written["steps"]
    assert steps and all(s["status"] == "completed" and "verdict" not in s for s in steps)
    header = (outcome.run_dir / "steps.csv").read_text().splitlines()[0].split(",")
    assert "status" in header and "verdict" not in header
    # the session's server is the embedded FerretDB given by URL: FerretDB, not embedded in this run
    assert written["target"]["engine"] == "ferretdb" and written["target"]["embedded"] is False

    run = RunResult.load(outcome.run_dir)
    m = run.manifest
    assert m.target.engine is ServerEngine.FERRETDB and m.target.build_info.ferretdb
    assert m.host.hostname == socket.gethostname() and m.tool.pid and m.java.path and m.ycsb.core
    assert m.driver_settings is not None and m.driver_settings.settings["retry_writes"] is not None
    assert not (m.target.extra or m.host.extra or m.tool.extra or m.java.extra or m.ycsb.extra or m.extra)
    run.save_manifest()
    assert json.loads((outcome.run_dir / MANIFEST).read_text()) == written

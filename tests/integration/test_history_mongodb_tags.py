"""Issue 38, case 12 against a real MongoDB history (the embedded server): a run folder whose tag key a
MongoDB document cannot hold as a field (``$where``, a dotted key: written by a ycsb-runner from before the
tag checks) is still indexed by ``history rebuild``, and ``runs`` shows and filters its tags as SQLite does
(tests/unit/test_hostile_round3.py has the other cases)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from pymongo import MongoClient
from typer.testing import CliRunner

from ycsb_runner.cli import app


def _tag(folder: Path, **tags: str) -> None:
    m = json.loads((folder / "manifest.json").read_text())
    m["tags"] = tags
    (folder / "manifest.json").write_text(json.dumps(m))


def test_12_a_run_tagged_with_a_dollar_key_is_indexed_in_a_mongodb_history(
    results: Path, mongo_url: str, mongo: MongoClient
) -> None:
    _tag(results / "tencent-analyse", **{"$where": "sleep(1)", "a.b": "c", "night": "1"})
    db = f"hist_{uuid.uuid4().hex[:8]}"
    url = mongo_url.rsplit("/", 1)[0] + f"/{db}"
    runner = CliRunner()
    built = runner.invoke(app, ["history", "rebuild", "--results", str(results), "--history-url", url])
    assert built.exit_code == 0, built.output
    assert "skipped" not in built.output
    shown = runner.invoke(app, ["runs", "--history-url", url, "-f", "json"])
    assert shown.exit_code == 0, shown.output
    tags = {r["run_id"]: r["tags"] for r in json.loads(shown.stdout)["rows"]}
    assert tags["tencent-analyse"] == "$where=sleep(1),a.b=c,night=1"
    picked = runner.invoke(app, ["runs", "--history-url", url, "--tag", "$where=sleep(1)", "-f", "json"])
    assert [r["run_id"] for r in json.loads(picked.stdout)["rows"]] == ["tencent-analyse"]
    again = runner.invoke(app, ["history", "rebuild", "--results", str(results), "--history-url", url])
    assert again.exit_code == 0, again.output  # every later rebuild indexes it too
    mongo.drop_database(db)

"""Issue 50: the run folder's format is versioned and older folders still load (as pyperf reads older JSON).

``tests/data/run_format_2/run-format-2`` is a real run folder written by ycsb-runner before result format 3
(its README says how). It loads as it is, upgraded in memory, and reports exactly as the same folder does once
saved again in the new format; keys a newer writer added survive a load and a save; a known key of the wrong
type is a one-line error.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ycsb_runner.analyse.results import results_table
from ycsb_runner.cli import app
from ycsb_runner.errors import UserError
from ycsb_runner.report.run_report import write_report
from ycsb_runner.runs.columns import MANIFEST_SECTIONS
from ycsb_runner.runs.history import run_record
from ycsb_runner.runs.model import (
    FORMAT_VERSION,
    MANIFEST,
    READABLE_FORMATS,
    SECTION_NAMES,
    CanariesRecord,
    DriverSettingsRecord,
    ManifestSection,
    RunResult,
    ServerEngine,
)

OLD = Path(__file__).parents[1] / "data" / "run_format_2" / "run-format-2"
# result format 3, written by main before format 4: each step's outcome still named `verdict`
FORMAT_3 = Path(__file__).parents[1] / "data" / "run_format_3" / "run-format-3"


def _copy(tmp_path: Path, where: str) -> Path:
    """A copy of the format-2 folder under *where*, with the folder's own name (reports name it)."""
    return Path(shutil.copytree(OLD, tmp_path / where / OLD.name))


def _manifest(folder: Path) -> dict[str, Any]:
    return json.loads((folder / MANIFEST).read_text())


def test_a_format_2_folder_loads_upgraded_and_is_left_as_it_is(tmp_path: Path) -> None:
    assert _manifest(OLD)["format_version"] == 2 and "engine" not in _manifest(OLD)["target"]
    assert 2 in READABLE_FORMATS and FORMAT_VERSION == 4
    m = RunResult.load(OLD).manifest
    assert m.format_version == FORMAT_VERSION
    assert m.target.engine is ServerEngine.FERRETDB and m.target.embedded  # worked out on reading
    assert m.host.hostname and m.tool.name == "ycsb-runner" and m.java.version and m.ycsb.binding_class
    assert isinstance(m.canaries, CanariesRecord) and m.canaries.load_generator[0].client == "local"
    assert (
        isinstance(m.driver_settings, DriverSettingsRecord) and "retry_writes" in m.driver_settings.settings
    )
    assert _manifest(OLD)["format_version"] == 2  # reading did not write


def test_an_older_folder_reports_as_the_same_folder_saved_again(tmp_path: Path) -> None:
    """The report, the results table, the `table` command and the history record of the format-2 folder equal
    those of its copy upgraded and saved again (format 4 on disk)."""
    old, new = _copy(tmp_path, "old"), _copy(tmp_path, "new")
    RunResult.load(new).save_manifest()
    saved = _manifest(new)
    assert saved["format_version"] == 4 and saved["target"]["engine"] == "ferretdb"
    assert saved["fingerprint"] == _manifest(old)["fingerprint"]  # the history's series go on

    reports = {}
    for name, folder in (("old", old), ("new", new)):
        html, md = write_report(folder, tmp_path / f"report-{name}")
        figures = sorted((md.parent / "report-figures").glob("*.png"))
        reports[name] = (md.read_text(), [p.name for p in figures], len(html.read_text()))
    assert reports["old"] == reports["new"]
    assert "Not MongoDB: ycsb-runner's embedded test server" in reports["old"][0]
    assert results_table(old).equals(results_table(new))

    tables = [CliRunner().invoke(app, ["table", str(f)]) for f in (old, new)]
    assert [t.exit_code for t in tables] == [0, 0] and tables[0].output == tables[1].output

    records = [run_record(RunResult.load(f)) for f in (old, new)]
    assert {**records[0].run, "folder": ""} == {**records[1].run, "folder": ""}
    assert records[0].metrics == records[1].metrics and records[0].metrics


def test_a_format_3_folder_loads_each_steps_status_from_its_verdict() -> None:
    """The steps of a format-3 folder (manifest and steps.csv name the outcome `verdict`) load with their
    ``status`` filled and a steps frame with a ``status`` column; the files are left as they are."""
    on_disk = _manifest(FORMAT_3)
    header = (FORMAT_3 / "steps.csv").read_text().splitlines()[0].split(",")
    assert on_disk["format_version"] == 3 and "verdict" in header and "status" not in header
    said = [s["verdict"] for s in on_disk["steps"]]
    assert said == ["completed"] * 3 and not any("status" in s for s in on_disk["steps"])
    before = {p.name: p.read_bytes() for p in (FORMAT_3 / MANIFEST, FORMAT_3 / "steps.csv")}

    run = RunResult.load(FORMAT_3)
    assert [s.status for s in run.manifest.steps] == said  # not "pending", the field's default
    assert all(not s.extra for s in run.manifest.steps)  # `verdict` read as the status, not kept beside it
    assert list(run.steps["status"]) == said and "verdict" not in run.steps.columns
    assert run.steps.columns.get_loc("status") == header.index("verdict")  # in its place
    assert {p.name: p.read_bytes() for p in (FORMAT_3 / MANIFEST, FORMAT_3 / "steps.csv")} == before


def test_a_format_3_folder_reports_as_the_same_folder_saved_again(tmp_path: Path) -> None:
    """A format-3 folder and its copy saved again (format 4: manifest and steps.csv say `status`) give the
    same results table, `table` output, report and history record."""
    old = Path(shutil.copytree(FORMAT_3, tmp_path / "old" / FORMAT_3.name))
    new = Path(shutil.copytree(FORMAT_3, tmp_path / "new" / FORMAT_3.name))
    RunResult.load(new).save({})
    saved = _manifest(new)
    assert saved["format_version"] == 4 and [s["status"] for s in saved["steps"]] == ["completed"] * 3
    assert not any("verdict" in s for s in saved["steps"])
    assert "verdict" not in (new / "steps.csv").read_text().splitlines()[0].split(",")
    assert saved["fingerprint"] == _manifest(old)["fingerprint"]

    assert results_table(old).equals(results_table(new))
    tables = [CliRunner().invoke(app, ["table", str(f)]) for f in (old, new)]
    assert [t.exit_code for t in tables] == [0, 0] and tables[0].output == tables[1].output
    reports = {}
    for name, folder in (("old", old), ("new", new)):
        _html, md = write_report(folder, tmp_path / f"report-{name}")
        reports[name] = md.read_text()
    assert reports["old"] == reports["new"] and "| completed |" in reports["old"]
    records = [run_record(RunResult.load(f)) for f in (old, new)]
    assert {**records[0].run, "folder": ""} == {**records[1].run, "folder": ""}
    assert records[0].run["status"] == "completed"
    assert records[0].metrics == records[1].metrics and records[0].metrics  # completed steps are measured


def test_keys_a_newer_writer_added_are_kept_on_save(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "newer")
    doc = _manifest(folder)
    doc["format_version"] = FORMAT_VERSION
    for step in doc["steps"]:  # the folder as this version writes it (format 4: a step's `status`)
        step["status"] = step.pop("verdict")
    doc["target"]["engine"] = "some-engine-to-come"  # a name this version does not know: unknown
    doc["target"]["topology"] = {"shards": 2}
    doc["target"]["build_info"]["gitVersion"] = "abc"
    doc["host"]["kernel"] = "6.18"
    doc["tool"]["commit"] = "952970b"
    doc["canaries"]["host"]["irq_pct"] = 0.5
    doc["canaries"]["load_generator"][0]["jvm"] = "17"
    doc["driver_settings"]["server_api"] = "1"  # a setting a newer binding reports
    doc["energy"] = {"joules": 12}
    doc["suite"]["owner"] = "perf-team"
    doc["steps"][1]["numa_node"] = 0
    (folder / MANIFEST).write_text(json.dumps(doc))

    run = RunResult.load(folder)
    assert run.manifest.target.engine is ServerEngine.UNKNOWN
    assert run.manifest.host.extra == {"kernel": "6.18"} and run.manifest.extra == {"energy": {"joules": 12}}
    run.save_manifest()
    back = _manifest(folder)
    assert back["target"]["topology"] == {"shards": 2} and back["target"]["build_info"]["gitVersion"] == "abc"
    assert back["host"]["kernel"] == "6.18" and back["tool"]["commit"] == "952970b"
    assert back["canaries"]["host"]["irq_pct"] == 0.5 and back["canaries"]["load_generator"][0]["jvm"] == "17"
    assert back["driver_settings"]["server_api"] == "1" and back["energy"] == {"joules": 12}
    assert back["suite"]["owner"] == "perf-team" and back["steps"][1]["numa_node"] == 0
    step = RunResult.load(folder).manifest.steps[1]
    assert step.extra == {"numa_node": 0} and "numa_node" not in step.csv_row()  # steps.csv: its own columns
    assert back["fingerprint"] == _manifest(OLD)["fingerprint"]


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("host", "hostname"), 5, "host.hostname is int 5, not text"),
        (("target", "embedded"), "yes", "target.embedded is str 'yes', not true or false"),
        (("target", "build_info"), [1], "target.build_info is list"),
        (("java", "jvm_args"), [1], r"java.jvm_args\[\] is int"),
        (("canaries", "load_generator"), [{"threads": "2"}], r"canaries.load_generator\[\].threads is str"),
        (("driver_settings", "varies_by_step"), "max_pool_size", "driver_settings.varies_by_step is str"),
        (("format_version",), 5, "result format 5; this ycsb-runner reads formats 2, 3, 4"),
        (("format_version",), 1, "result format 1"),
    ],
)
def test_a_known_key_of_the_wrong_type_is_a_one_line_error(
    tmp_path: Path, path: tuple[str, ...], value: Any, message: str
) -> None:
    folder = _copy(tmp_path, "bad")
    doc = _manifest(folder)
    inner = doc
    for key in path[:-1]:
        inner = inner[key]
    inner[path[-1]] = value
    (folder / MANIFEST).write_text(json.dumps(doc))
    with pytest.raises(UserError, match=message) as err:
        RunResult.load(folder)
    assert "\n" not in str(err.value)


def test_results_md_documents_every_key_of_every_section() -> None:
    """RESULTS.md's manifest tables (generated from ``columns.MANIFEST_SECTIONS``) name each section's fields,
    no more and no fewer, for every section of the model."""
    from dataclasses import fields

    assert set(MANIFEST_SECTIONS) == set(SECTION_NAMES) == set(_sections(ManifestSection))
    for section, docs in MANIFEST_SECTIONS.items():
        assert list(docs) == [f.name for f in fields(section) if f.name != "extra"], section.__name__


def _sections(cls: type) -> set[type]:
    return {s for sub in cls.__subclasses__() for s in {sub, *_sections(sub)}}

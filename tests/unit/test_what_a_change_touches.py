"""CONTRIBUTING's "What a change touches", made true on a copy of the package: a new study with a new table
layout is its entry and its layout's name in studies.py, one Layout class in analyse/layouts.py and its suite
file (3 files); a new output format is one Renderer in output.py (1 file). The copy then runs as a user would
run it (the command in a process of its own): the suite is listed, a run of the study gets the new layout's
table, and ``table``, ``report``, ``runs`` and ``regress`` print through the new format."""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DATA = ROOT / "tests" / "data"

STUDY = """
TOY_LAYOUT = "toy-best"
STUDIES["toy-study"] = Study("toy-study", "a toy study", TOY_LAYOUT, ("throughput_ops_s",))
"""
LAYOUT = '''

class ToyBestLayout(Layout):
    """The best throughput per mix."""

    name = TOY_LAYOUT

    def table(self, a: Analysed, study: Study) -> StudyTable:
        best = a.step_metrics.groupby("mix", sort=False)["throughput_ops_s"].max()
        return StudyTable(best.rename("best (ops/s)").reset_index(), "")


register_layout(ToyBestLayout())
'''
FORMAT = """class TsvRenderer(Renderer):
    name = "tsv"
    data = True

    def table(self, table: Table) -> None:
        typer.echo(table.frame.to_csv(sep="\\t", index=False), nl=False)


"""


def _copy_package(tmp: Path) -> Path:
    dst = tmp / "pkg" / "ycsb_runner"
    shutil.copytree(ROOT / "ycsb_runner", dst, ignore=shutil.ignore_patterns("__pycache__"))
    return dst


def _touched(copy: Path) -> list[str]:
    """The files of the copy that differ from the package or are new."""
    out = []
    for path in sorted(copy.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            rel = path.relative_to(copy)
            original = ROOT / "ycsb_runner" / rel
            if not original.exists() or not filecmp.cmp(path, original, shallow=False):
                out.append(str(rel))
    return out


def _cli(pkg: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(pkg.parent), "COLUMNS": "120"}
    env.pop("MONGODB_URL", None)
    code = "import sys; from ycsb_runner.cli import main; sys.argv[0] = 'ycsb-runner'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def changed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    tmp = tmp_path_factory.mktemp("change")
    copy = _copy_package(tmp)
    with (copy / "studies.py").open("a", encoding="utf-8") as f:
        f.write(STUDY)
    layouts = copy / "analyse" / "layouts.py"
    text = layouts.read_text(encoding="utf-8").replace(
        "from ycsb_runner.studies import ", "from ycsb_runner.studies import TOY_LAYOUT, "
    )
    layouts.write_text(text + LAYOUT, encoding="utf-8")
    quick = (copy / "suites" / "quick.toml").read_text(encoding="utf-8")
    suite = quick.replace('name = "quick"', 'name = "toy"\nstudy = "toy-study"', 1)
    (copy / "suites" / "toy.toml").write_text(suite, encoding="utf-8")
    output = copy / "present/output.py"
    text = output.read_text(encoding="utf-8")
    registered = "for _renderer in (TableRenderer(), CsvRenderer(), JsonRenderer(), MarkdownRenderer()):"
    assert registered in text
    text = text.replace("FORMATS: dict[str, Renderer] = {}", FORMAT + "FORMATS: dict[str, Renderer] = {}")
    output.write_text(
        text.replace("MarkdownRenderer()):", "MarkdownRenderer(), TsvRenderer()):"), encoding="utf-8"
    )
    return copy, _touched(copy)


def test_a_study_with_a_layout_is_three_files_and_a_format_one(changed: tuple[Path, list[str]]) -> None:
    _copy, touched = changed
    assert touched == ["analyse/layouts.py", "present/output.py", "studies.py", "suites/toy.toml"]


def test_the_new_study_and_format_work_through_the_commands(
    changed: tuple[Path, list[str]], tmp_path: Path
) -> None:
    copy, _touched = changed
    suites = _cli(copy, "suites", "-f", "tsv", cwd=tmp_path)
    assert suites.returncode == 0, suites.stderr
    rows = [line.split("\t") for line in suites.stdout.splitlines()]
    assert "toy" in {row[0] for row in rows[1:]}

    run = Path(shutil.copytree(DATA / "runs" / "tencent-analyse", tmp_path / "toy-run"))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["suite"]["study"] = "toy-study"
    (run / "manifest.json").write_text(json.dumps(manifest))
    table = _cli(copy, "table", str(run), "-f", "tsv", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    header, *lines = [line.split("\t") for line in table.stdout.splitlines()]
    assert header[:2] == ["mix", "best (ops/s)"] and len(lines) >= 2
    report = _cli(copy, "report", str(run), "-f", "tsv", cwd=tmp_path)  # the report's tables, the toy's too
    assert report.returncode == 0, report.stderr
    assert "mix\tbest (ops/s)\n" in report.stdout and "what\tvalue\n" in report.stdout

    history = tmp_path / "history.sqlite"
    shutil.copy(DATA / "history" / "burner-nights.sqlite", history)
    where = ["--results", str(tmp_path), "--history-url", str(history)]
    runs = _cli(copy, "runs", *where, "-f", "tsv", cwd=tmp_path)
    assert runs.returncode == 0, runs.stderr
    assert runs.stdout.splitlines()[0].split("\t")[0] == "run_id" and len(runs.stdout.splitlines()) == 13
    regress = _cli(copy, "regress", "quick", *where, "--all", "-f", "tsv", cwd=tmp_path)
    assert regress.returncode in (0, 1, 2) and not regress.stderr.startswith("Traceback"), regress.stderr
    assert (
        "\tverdict\t" in regress.stdout.splitlines()[0] + "\t" or "verdict" in regress.stdout.splitlines()[0]
    )

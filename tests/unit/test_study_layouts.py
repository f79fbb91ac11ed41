"""Study layouts are classes registered in ycsb_runner/analyse/layouts.py under names ycsb_runner/studies.py
gives: no other module names a study or a layout, and a layout registered from outside (here, from the
test) gets its table through every path:
``RunAnalysis.table``, ``ycsb-runner table`` (its terminal priority), ``compare --reference`` and the
report."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ycsb_runner import studies
from ycsb_runner.analyse import layouts
from ycsb_runner.analyse.analysis import RunAnalysis
from ycsb_runner.analyse.layouts import LAYOUTS, Layout, register_layout
from ycsb_runner.analyse.table import StudyTable, step_metrics
from ycsb_runner.cli import app
from ycsb_runner.report.run_report import write_report
from ycsb_runner.runs.model import RunResult
from ycsb_runner.studies import STUDIES, Study

PACKAGE = Path(__file__).parents[2] / "ycsb_runner"
RUNS = Path(__file__).parents[1] / "data" / "runs"
PNG = b"\x89PNG\r\n\x1a\n toy"  # the report stores a figure's bytes as they are


def _docstrings(tree: ast.Module) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def _mentions_layout(node: ast.AST) -> bool:
    """``x.layout`` or ``...["layout"]`` / ``.get("layout")``."""
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr == "layout":
            return True
        if isinstance(n, ast.Constant) and n.value == "layout":
            return True
    return False


def name_literals(root: Path, names: set[str], skip: Path) -> list[str]:
    """``file:line: why`` for every string literal outside *skip* (docstrings aside) that is one of *names*,
    and every comparison against a layout (``study.layout == ...``, ``df.attrs["layout"] in ...``)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == skip:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        where = path.relative_to(root.parent)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if node.value in names:
                    found.append(f"{where}:{node.lineno}: {node.value!r}")
            if isinstance(node, ast.Compare) and any(
                _mentions_layout(x) for x in [node.left, *node.comparators]
            ):
                found.append(f"{where}:{node.lineno}: compares a layout")
    return found


def test_no_study_or_layout_name_outside_the_registry() -> None:
    names = set(STUDIES) | set(LAYOUTS)
    assert {"tencent-mongodb44", "alibaba-audit", "means", "off-on", "generic"} <= names
    assert name_literals(PACKAGE, names, PACKAGE / "studies.py") == []


def test_the_scan_finds_names_and_layout_matches(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "studies.py").write_text('X = "means"\n')
    (pkg / "a.py").write_text(
        '"""The "means" layout is fine in prose."""\n'
        "def f(study, df):\n"
        "    if study.layout != kind:\n"
        '        return {"tencent-mongodb44": 1}\n'
        '    return df.attrs.get("layout") in KINDS\n'
    )
    got = sorted(name_literals(pkg, {"means", "tencent-mongodb44"}, pkg / "studies.py"))
    assert got == [
        "pkg/a.py:3: compares a layout",
        "pkg/a.py:4: 'tencent-mongodb44'",
        "pkg/a.py:5: compares a layout",
    ]


class ToyLayout(Layout):
    """One row per mix: the number of measured steps and the best throughput."""

    name = "toy"
    priority = ("best (ops/s)", "mix")

    def table(self, a: RunAnalysis, study: Study) -> StudyTable:
        m = a.step_metrics
        out = m.groupby("mix", sort=False).agg(
            steps=("step", "size"),
            worst=("throughput_ops_s", "min"),
            mean=("throughput_ops_s", "mean"),
            best=("throughput_ops_s", "max"),
        )
        out = out.reset_index().rename(columns={c: f"{c} (ops/s)" for c in ("worst", "mean", "best")})
        return StudyTable(out, f"{a.run.suite_name}: best throughput per mix ({study.title})")

    def reference(self, a: RunAnalysis, study: Study, size: str | None, storage: str | None) -> pd.DataFrame:
        from ycsb_runner.analyse.compare import means_reference

        return means_reference(a.run, study, size, storage, a.step_metrics)

    def figures(self, a: RunAnalysis, study: Study, tables: dict) -> list[tuple[str, str, list[bytes]]]:
        return [("toy-figure", "the toy layout's own figure", [PNG])]


@pytest.fixture()
def toy_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The Tencent-layout run, declared as a study of the toy layout that publishes a Tencent table."""
    monkeypatch.setattr(layouts, "LAYOUTS", dict(layouts.LAYOUTS))
    register_layout(ToyLayout())
    base = studies.STUDIES["tencent-mongodb44"]
    toy = Study(
        "toy-study",
        "a toy",
        ToyLayout.name,
        base.metrics,
        reference=base.reference,
        reference_columns=base.reference_columns,
    )
    # first in the registry: the study that compares with tencent-mongodb44 is the toy one
    monkeypatch.setattr(studies, "STUDIES", {toy.name: toy, **studies.STUDIES})
    run = Path(shutil.copytree(RUNS / "tencent-analyse", tmp_path / "toy-run"))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["suite"]["study"] = "toy-study"
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def test_a_layout_registered_from_outside_gives_the_table(toy_run: Path) -> None:
    study = RunAnalysis.of(toy_run).table
    table = study.frame
    assert study.layout == "toy"
    steps = step_metrics(RunResult.load(toy_run))
    by_mix = table.set_index("mix")
    for mix, group in steps.groupby("mix"):
        assert by_mix.loc[mix, "steps"] == len(group)
        assert by_mix.loc[mix, "best (ops/s)"] == pytest.approx(group["throughput_ops_s"].max())
    # the terminal keeps the layout's priority columns first when the table does not fit
    res = CliRunner().invoke(app, ["table", str(toy_run)], env={"COLUMNS": "40"})
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert "(a toy)" in lines[1] and "best (ops/s)" in lines[2]  # the title, then the kept columns
    assert "not shown: worst (ops/s), mean (ops/s)" in res.output
    # the layout's reference comparison, through the same dispatcher as the shipped studies
    cmp = RunAnalysis.of(toy_run).reference("tencent-mongodb44", size="2C4G", storage="cloud").frame
    assert set(cmp["size"]) == {"2C4G"} and set(cmp["mix"]) >= set(steps["mix"]) - {"load"}
    # the report shows the toy table under its title
    html, md = write_report(toy_run)
    text = md.read_text()
    assert "## tencent-analyse-tiny: best throughput per mix (a toy)" in text
    # and its own figure, among the report's figures
    assert "![the toy layout's own figure (1/1)](report-figures/toy-figure.png)" in text
    assert (toy_run / "report-figures" / "toy-figure.png").read_bytes() == PNG
    assert "the toy layout&#x27;s own figure" in html.read_text()

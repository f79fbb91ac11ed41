"""The run folder's layout is spelled in ycsb_runner/runs/model.py only: no other module names its files or
joins its folder names into a path (ast; prose and help texts may still mention them)."""

from __future__ import annotations

import ast
from pathlib import Path

from ycsb_runner.runs import model

PACKAGE = Path(__file__).parents[2] / "ycsb_runner"
FILES = {
    model.MANIFEST,
    model.STUDY_TABLE,
    model.COMPARE_CSV,
    model.STDOUT,
    model.STDERR,
    model.WORKLOAD_PROPERTIES,
    model.COMMAND,
    model.REPORT_HTML,
    model.REPORT_MD,
}
FOLDERS = {model.STEPS_DIR, model.HDR_DIR, model.CLIENTS_DIR, model.REPORT_FIGURES}


def layout_literals(root: Path, skip: Path) -> list[str]:
    """``file:line: name`` for a run-folder file name as a string, or a folder name joined with ``/``."""
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == skip:
            continue
        where = path.relative_to(root)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in FILES:
                found.append(f"{where}:{node.lineno}: {node.value}")
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
                for side in (node.left, node.right):
                    if isinstance(side, ast.Constant) and side.value in FOLDERS:
                        found.append(f"{where}:{node.lineno}: / {side.value}")
            if isinstance(node, ast.JoinedStr):  # f"{root}/steps/..." or f"{dir}/hdr"
                template = "".join(p.value if isinstance(p, ast.Constant) else "{}" for p in node.values)
                if template in FILES:  # f"compare-{name}.csv"
                    found.append(f"{where}:{node.lineno}: {template}")
                for part in node.values:
                    text = part.value if isinstance(part, ast.Constant) else ""
                    if any(text.startswith(f"/{f}") or text == f"{f}/" for f in FOLDERS | FILES):
                        found.append(f"{where}:{node.lineno}: {text}")
    return sorted(found)


def test_only_the_model_spells_the_run_folder() -> None:
    assert layout_literals(PACKAGE, PACKAGE / "runs/model.py") == []


def test_the_scan_sees_names_and_joins(tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text('MANIFEST = "manifest.json"\n')
    (tmp_path / "a.py").write_text(
        "def f(root, step):\n"
        '    a = root / "steps" / step / "hdr"\n'
        '    b = root / "study_table.csv"\n'
        '    c = f"{root}/stdout.txt"\n'
        '    d = root / f"compare-{name}.csv"\n'
        '    e = step_dir / "command.txt"\n'
        '    return "see steps/<step>/stdout.txt for the log"\n'
    )
    assert layout_literals(tmp_path, tmp_path / "model.py") == [
        "a.py:2: / hdr",
        "a.py:2: / steps",
        "a.py:3: study_table.csv",
        "a.py:4: /stdout.txt",
        "a.py:5: compare-{}.csv",
        "a.py:6: command.txt",
    ]


def test_the_model_paths() -> None:
    root = PACKAGE.parent / "tests" / "data" / "runs" / "tencent-analyse"
    run = model.RunResult.load(root)
    assert run.manifest_path == root / "manifest.json" and run.manifest_path.is_file()
    assert run.study_table_path == root / "study_table.csv" and run.study_table_path.is_file()
    first = run.steps["step"].iloc[0]
    assert run.step_path(first) == root / "steps" / first and (run.step_path(first) / "stdout.txt").is_file()
    assert run.hdr_dir(first) == root / "steps" / first / "hdr"
    assert (run.step_path(first) / "workload.properties").is_file() and (
        run.step_path(first) / "command.txt"
    ).is_file()
    assert run.compare_path("tencent-mongodb44") == root / "compare-tencent-mongodb44.csv"

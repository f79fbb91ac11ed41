"""The package's public names are what the README shows: every ``from ycsb_runner import ...`` of the README
imports, names only what ``ycsb_runner.__all__`` lists, and every listed name is shown in the README. The
names load lazily: importing the package imports no pandas."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import ycsb_runner

README = Path(__file__).parents[2] / "README.md"


def readme_imports(text: str) -> list[ast.ImportFrom]:
    """Every ``from ycsb_runner... import`` statement of the README's Python blocks and inline code."""
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    inline = re.findall(r"`(from ycsb_runner[^`]*)`", text)
    out = []
    for source in [*blocks, *inline]:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("ycsb_runner"):
                out.append(node)
    return out


def test_the_readme_imports_only_public_names_and_they_import() -> None:
    """The README's imports, and the documentation site's (docs/: the Python API page, the tutorials)."""
    from docs_pages import text as docs_text

    imports = readme_imports(docs_text())
    assert imports, "the README shows no import of ycsb_runner"
    for node in imports:
        assert node.module == "ycsb_runner", f"the README imports from a private module: {node.module}"
        for alias in node.names:
            assert alias.name in ycsb_runner.__all__, f"{alias.name} is not in ycsb_runner.__all__"
            assert getattr(ycsb_runner, alias.name) is not None


def test_every_public_name_is_shown_in_the_readme_and_resolves() -> None:
    text = README.read_text(encoding="utf-8")
    code = "".join(re.findall(r"```python\n(.*?)```", text, re.S))
    for name in ycsb_runner.__all__:
        shown = f"`{name}`" in text or f"`ycsb_runner.{name}`" in text or re.search(rf"\b{name}\b", code)
        assert shown, f"the README never shows {name}"
        value = getattr(ycsb_runner, name)
        if name != "__version__":
            assert value.__name__ == name and value.__module__.startswith("ycsb_runner.")
    assert sorted(dir(ycsb_runner)) == dir(ycsb_runner) and set(ycsb_runner.__all__) <= set(dir(ycsb_runner))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        ycsb_runner.no_such_name  # noqa: B018
    except AttributeError as err:
        assert "no_such_name" in str(err)
    else:
        raise AssertionError("ycsb_runner.no_such_name did not raise AttributeError")


def test_importing_the_package_loads_no_pandas() -> None:
    seen = "print('pandas' in sys.modules)"
    probe = f"import sys, ycsb_runner; {seen}; ycsb_runner.RunAnalysis; {seen}"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]


def test_the_scan_reads_blocks_and_inline_code() -> None:
    text = "x\n```python\nfrom ycsb_runner import a, b\nimport os\n```\n"
    text += "and `from ycsb_runner.bench import c` too"
    got = [(n.module, [a.name for a in n.names]) for n in readme_imports(text)]
    assert got == [("ycsb_runner", ["a", "b"]), ("ycsb_runner.bench", ["c"])]

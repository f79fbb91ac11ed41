"""No docstring, comment or page names a module that does not exist: every dotted ``ycsb_runner.`` path in
the package's source (docstrings and comments) and in the Markdown (docs/, README.md, RESULTS.md,
CONTRIBUTING.md) resolves to a module or to an attribute of one (a class's annotated field counts); so does
a dotted name in backticks that begins with the name of one of the package's modules (``steady.SteadyState``,
``analyse.compare.compare_table``): read from the package, from the text's own package, or from a module of
that name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "ycsb_runner"
DOTTED = re.compile(r"\bycsb_runner(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
QUOTED = re.compile(r"(?<!`)``?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(\))?``?(?!`)")
FILES = (".py", ".md", ".html", ".csv", ".json", ".txt", ".sqlite", ".toml", ".yml", ".sh", ".png", ".svg")
# dotted names that begin like a module and are something else: MongoDB's config database, a rich Console's
# width, the manifest's findmax fields, Java's and YCSB's packages, a ParsedRun's field, a series' name
NOT_MODULES = (
    "config.mongos",
    "console.width",
    "findmax.probes",
    "findmax.bound",
    "site.ycsb.",
    "java.",
    "run.hdr",
    "run.a.",
)
MODULES: dict[str, list[str]] = {}  # a module's last name -> the dotted names of the modules that have it
for _file in sorted(PACKAGE.rglob("*.py")):
    _parts = _file.relative_to(ROOT).with_suffix("").parts
    _parts = _parts[:-1] if _parts[-1] == "__init__" else _parts
    MODULES.setdefault(_parts[-1], []).append(".".join(_parts))


def named(text: str, package: str) -> list[str]:
    """The dotted paths *text* (in *package*) names, each as its candidate full paths joined by "|"."""
    out = list(DOTTED.findall(text))
    for span in QUOTED.findall(text):
        head, _, rest = span.partition(".")
        if span.startswith(("ycsb_runner.", *NOT_MODULES)) or span.endswith(FILES) or head not in MODULES:
            continue
        out.append(
            "|".join([f"ycsb_runner.{span}", f"{package}.{span}", *(f"{m}.{rest}" for m in MODULES[head])])
        )
    return out


def resolves(path: str) -> bool:
    """Whether *path* is a module, or an attribute (at any depth) of the longest module it begins with."""
    parts = path.split(".")
    if "__main__" in parts:  # importing it runs the command
        return parts == ["ycsb_runner", "__main__"]
    obj, rest = None, parts
    for n in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:n]))
        except ImportError:
            continue
        rest = parts[n:]
        break
    for name in rest:
        if hasattr(obj, name):
            obj = getattr(obj, name)
            continue
        fields = {k for c in getattr(obj, "__mro__", ()) for k in getattr(c, "__annotations__", {})}
        if name not in fields:
            return False
        obj = None  # a field without a class-level value: nothing further to resolve
    return True


def source_paths() -> list[tuple[str, str]]:
    """(file, dotted path) for every dotted path of the package's source (docstrings, comments, code)."""
    out = []
    for file in sorted(PACKAGE.rglob("*.py")):
        package = ".".join(file.relative_to(ROOT).with_suffix("").parts[:-1])
        out += [(str(file.relative_to(ROOT)), m) for m in named(file.read_text(encoding="utf-8"), package)]
    return out


def markdown_paths() -> list[tuple[str, str]]:
    pages = [
        *sorted((ROOT / "docs").rglob("*.md")),
        *(ROOT / n for n in ("README.md", "RESULTS.md", "CONTRIBUTING.md")),
    ]
    return [
        (str(p.relative_to(ROOT)), m) for p in pages for m in DOTTED.findall(p.read_text(encoding="utf-8"))
    ]


def test_the_scan_sees_docstrings_and_pages() -> None:
    assert len(source_paths()) > 20 and len(markdown_paths()) > 10


def test_every_dotted_path_resolves() -> None:
    broken = sorted(
        f"{where}: {path.split('|')[0]}"
        for where, path in source_paths() + markdown_paths()
        if not any(resolves(p) for p in path.split("|"))
    )
    assert broken == []


@pytest.mark.parametrize(
    ("path", "ok"),
    [
        ("ycsb_runner.analyse.compare_service", True),
        ("ycsb_runner.analyse.compare_service.compare_runs", True),
        ("ycsb_runner.runs.model.RunResult.load", True),
        ("ycsb_runner.analyse.compare_service.CompareOutcome.table", True),  # a dataclass field
        ("ycsb_runner.analyse.regress_service", False),  # it is nightly.regress_service
        ("ycsb_runner.no_such_module", False),
        ("ycsb_runner.runs.model.NoSuchClass", False),
    ],
)
def test_resolves(path: str, ok: bool) -> None:
    assert resolves(path) is ok


def test_a_quoted_name_is_read_from_the_package_its_package_or_a_module_of_that_name() -> None:
    [ours] = named("(``steady.SteadyState``)", "ycsb_runner.report")
    assert any(resolves(p) for p in ours.split("|"))
    [gone] = named("``server.EmbeddedServer``", "ycsb_runner.audit")  # it is embedded.EmbeddedServer
    assert not any(resolves(p) for p in gone.split("|"))
    assert named("``df.attrs``, ``report.html``, ``config.mongos``", "ycsb_runner") == []

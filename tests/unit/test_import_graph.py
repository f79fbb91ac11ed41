"""No import circle inside ycsb_runner/, between its modules or between its rooms (a top-level module or
subpackage): every ``import`` of a package module, at module level, inside a function (a deferred import still
ties the two modules together) or under ``if TYPE_CHECKING:`` (a type named for the checker ties them too: the
one module must be read to understand the other), read from the source with ast."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "ycsb_runner"


def module_names(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the package (``pkg/__init__.py`` is ``pkg``)."""
    out: dict[str, Path] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules *path* (module *name*) imports anywhere in its body."""
    is_package = path.name == "__init__.py"
    out: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package, one level up per extra dot
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            # `from pkg import mod` imports the module pkg.mod; `from mod import name`, the module mod
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in known else source for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:  # `import a.b.c` of a name below a module: its module
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def import_graph(root: Path) -> dict[str, set[str]]:
    modules = module_names(root)
    known = set(modules)
    return {name: imported_modules(name, path, known) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle (``[a, b, ..., a]``), or None. Depth-first search with an explicit path."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    for start in sorted(graph):
        if start in state:
            continue
        path = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def room_graph(graph: dict[str, set[str]], package: str) -> dict[str, set[str]]:
    """The graph between rooms: ``package.x.y`` belongs to the room ``package.x`` (a top-level module or
    subpackage); arrows inside a room are dropped."""

    def room(module: str) -> str:
        return ".".join(module.split(".")[:2]) if module != package else package

    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        out.setdefault(room(module), set()).update(room(t) for t in targets if room(t) != room(module))
    return out


def test_the_package_has_no_import_circle() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 50 and sum(len(v) for v in graph.values()) > 100  # the walk saw the package
    cycle = find_cycle(graph)
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


def test_the_graph_sees_deferred_relative_and_from_package_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("from .b import thing\n")
    (pkg / "a.py").write_text("def f():\n    from pkg.sub import b\n")
    (pkg / "sub" / "b.py").write_text("from ..c import x\nthing = 1\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nimport pkg.a\nif TYPE_CHECKING:\n    import pkg.sub\nx = 1\n"
    )
    graph = import_graph(pkg)
    assert graph == {
        "pkg": set(),
        "pkg.sub": {"pkg.sub.b"},
        "pkg.a": {"pkg.sub.b"},
        "pkg.sub.b": {"pkg.c"},
        "pkg.c": {"pkg.a", "pkg.sub"},  # the type-only import counts
    }
    assert find_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.c", "pkg.a"]
    (pkg / "c.py").write_text("x = 1\n")
    assert find_cycle(import_graph(pkg)) is None


def test_no_arrow_runs_up_between_rooms() -> None:
    """Rooms stack in floors (a room above every room it imports): a circle between two rooms (a module of
    install/ importing server.py, which imports install/ferretdb.py) is an arrow that runs back up."""
    rooms = room_graph(import_graph(PACKAGE), "ycsb_runner")
    assert {
        "ycsb_runner.analyse",
        "ycsb_runner.install",
        "ycsb_runner.prepare",
        "ycsb_runner.runs",
        "ycsb_runner.safe",
        "ycsb_runner.present",
    } <= set(rooms)
    cycle = find_cycle(rooms)
    assert cycle is None, "rooms in a circle: " + " -> ".join(cycle or [])


def test_rooms_group_modules_by_top_level_name() -> None:
    graph = {"p": {"p.a"}, "p.a": {"p.b.x"}, "p.b.x": {"p.b.y"}, "p.b.y": {"p.a"}, "p.b": set()}
    assert room_graph(graph, "p") == {"p": {"p.a"}, "p.a": {"p.b"}, "p.b": {"p.a"}}
    assert find_cycle(room_graph(graph, "p")) == ["p.a", "p.b", "p.a"]


# The rooms stand in four layers; a room imports rooms of its own layer (without a circle) and of the layers
# below it, never of one above: the floor every stage stands on (errors, settings, paths, the operations'
# names, the guarantees of safe/); what a run is, how anything is shown, the studies, the audit strategies
# and the published tables; the stages of the flow (prepare/ -> execute/ -> parse/ -> analyse/, with
# install/, monitors/ and the nightly check beside them); what drives and shows the stages (findmax's
# search over benches, the reports and the site) and the entry points.
LAYERS: list[set[str]] = [
    {"errors", "config", "_version", "paths", "operations", "safe"},
    {"runs", "present", "studies", "audit", "reference"},
    {"prepare", "install", "monitors", "execute", "parse", "analyse", "nightly"},
    {"findmax", "report", "site", "bench", "cli", "__main__", ""},  # "": the package's own __init__.py
]


def layer_arrows_up(rooms: dict[str, set[str]], package: str) -> tuple[list[str], list[str]]:
    """(rooms in no layer, arrows from a room to a room of a higher layer), for the room graph *rooms*."""
    layer = {f"{package}.{name}" if name else package: i for i, names in enumerate(LAYERS) for name in names}
    unplaced = sorted(set(rooms) - set(layer))
    up = sorted(
        f"{a} -> {b}" for a, t in rooms.items() for b in t if a in layer and layer.get(b, 0) > layer[a]
    )
    return unplaced, up


def test_the_rooms_stand_in_layers() -> None:
    rooms = room_graph(import_graph(PACKAGE), "ycsb_runner")
    unplaced, up = layer_arrows_up(rooms, "ycsb_runner")
    assert unplaced == [], f"rooms in no layer (add each to LAYERS): {unplaced}"
    assert up == [], f"arrows that run up a layer: {up}"


def test_an_arrow_up_a_layer_is_seen() -> None:
    rooms = {"p.safe": {"p.errors"}, "p.runs": {"p.safe"}, "p.extra": set()}
    assert layer_arrows_up(rooms, "p") == (["p.extra"], [])
    rooms["p.safe"].add("p.runs")  # the floor reaching up to the runs
    assert layer_arrows_up(rooms, "p") == (["p.extra"], ["p.safe -> p.runs"])


def private_imports(root: Path) -> list[str]:
    """``module: name`` for each ``_name`` one module of *root* imports from another of the package: a
    private that another module needs is part of its module's interface, and named so."""
    found = []
    for name, path in module_names(root).items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(root.name)):
                found += [
                    f"{name}: {a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    return found


def test_no_module_imports_another_modules_private_name(tmp_path: Path) -> None:
    assert private_imports(PACKAGE) == []
    pkg = tmp_path / "ycsb_runner"
    pkg.mkdir()
    (pkg / "a.py").write_text("def _helper():\n    pass\n")
    (pkg / "b.py").write_text(
        "def f():\n    from ycsb_runner.a import _helper\n    from .a import _helper as h\n"
    )
    assert private_imports(pkg) == ["ycsb_runner.b: _helper", "ycsb_runner.b: _helper"]

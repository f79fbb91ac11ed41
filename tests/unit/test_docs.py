"""The documented command list (docs/reference/commands.md, once the README's "## Commands") and the CLI
agree, and the documented --format json works everywhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import typer
from docs_pages import DOCS, code_blocks, pages
from typer.testing import CliRunner

from ycsb_runner.cli import app

ROOT = Path(__file__).parents[2]
RUNS = Path(__file__).parents[1] / "data" / "runs"


def _cli_commands() -> set[str]:
    """Every command of the CLI: ``bench``, ``server start``, ...; a group with a default command is a
    command too (``regress`` and ``regress accept``), its hidden default command is not named."""
    out: set[str] = set()
    for name, cmd in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        subs = [s for s, c in getattr(cmd, "commands", {}).items() if not c.hidden]
        out |= {f"{name} {s}" for s in subs} if subs else {name}
        if getattr(cmd, "default_command", None):
            out.add(name)
    return out


def _readme_commands() -> set[str]:
    """The commands the "## Commands" block names (``server start|stop|status`` is three): the README's
    before the documentation site, now docs/reference/commands.md."""
    text = (DOCS / "reference" / "commands.md").read_text()
    block = text.split("## Commands", 1)[1].split("```", 2)[1]
    out: set[str] = set()
    for line in block.splitlines():
        m = re.match(r"ycsb-runner (\S+)(?: \[?([a-z|]+(?: [A-Z]+)?)\]?)?", line)
        if not m:
            continue
        name, sub = m.group(1), m.group(2)
        if sub and sub.split()[0].islower() and not sub.isupper():
            out |= {f"{name} {s}" for s in sub.split()[0].split("|")}
        else:
            out.add(name)
    return out


def test_readme_names_every_command_and_only_real_ones() -> None:
    cli, readme = _cli_commands(), _readme_commands()
    assert cli - readme == set(), "commands the README's list does not name"
    assert readme - cli == set(), "commands the README names that do not exist"


def test_version_and_short_help() -> None:
    from ycsb_runner import __version__

    runner = CliRunner()
    assert runner.invoke(app, ["--version"]).stdout.strip() == __version__
    res = runner.invoke(app, ["-h"], prog_name="ycsb-runner")
    assert res.exit_code == 0 and "Usage: ycsb-runner" in res.stdout
    assert "<bool>" not in res.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["suites"],
        ["reference", "list"],
        ["reference", "show", "tencent-threads"],
        ["table", str(RUNS / "tencent-analyse")],
        ["compare", str(RUNS / "tencent-analyse"), str(RUNS / "tencent-analyse")],
        ["compare", str(RUNS / "tencent-analyse"), "--reference", "tencent-mongodb44"],
        ["parse", str(Path(__file__).parents[1] / "data" / "ycsb" / "load.stdout")],
    ],
)
def test_format_json(argv: list[str]) -> None:
    res = CliRunner().invoke(app, [*argv, "--format", "json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc


def test_readme_python_snippets_define_every_name_they_use() -> None:
    """Issue 22, item 11: a snippet copied from the README or a page of the site runs without a NameError."""
    import ast
    import builtins

    blocks = [b for p in pages() for b in code_blocks(p.read_text(), ("python",))]
    assert blocks
    for block in blocks:
        tree = ast.parse(block)
        defined = set(dir(builtins))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                defined.add(node.id)
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        assert used <= defined, used - defined
        for node in ast.walk(tree):  # and every import resolves
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ycsb_runner"):
                module = __import__(node.module, fromlist=[a.name for a in node.names])
                assert all(hasattr(module, a.name) for a in node.names)


def test_results_md_names_every_file_a_run_folder_can_hold() -> None:
    text = (ROOT / "RESULTS.md").read_text()
    for name in ("report-figures/", "study_table.csv", "audit-restore.json", "audit_unverified"):
        assert f"`{name}" in text, name


def test_make_test_lists_each_skip_with_what_it_needs() -> None:
    """Issue 22, item 11: `make test` prints why a test was skipped and what to install, not only a count."""
    makefile = (ROOT / "Makefile").read_text()
    recipe = makefile.split("\ntest: setup\n", 1)[1].split("\n\n")[0].splitlines()
    assert recipe[0].strip() == "bash tools/test-needs.sh"  # installs sshd or says how, before the tests
    sessions = [line for line in recipe if "/pytest " in line]  # the workers' session, then the `alone` one
    assert len(sessions) == 2 and all(" -rs " in line and "tests/integration" in line for line in sessions)
    multi = (ROOT / "tests" / "integration" / "test_multi_clients.py").read_text()
    assert "sudo apt-get install openssh-server" in multi
    assert "set YCSB_RUNNER_SEEDS=" in (ROOT / "tests" / "unit" / "test_reference.py").read_text()


def _activate_blocks() -> list[tuple[str, list[str]]]:
    """Every shell block of the README and the site that starts with activating the venv, as (page,
    commands): the README's first block after `make bench`, Getting started's too."""
    out = []
    for page in pages():
        for block in code_blocks(page.read_text(), ("sh",)):
            if ".venv/bin/activate" in block:
                commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
                out.append((page.name, commands))
    return out


def test_readme_commands_run_as_printed_after_make() -> None:
    """Issue 39: after `make bench` the README's commands run as printed. Its first shell block after
    `make bench` puts `.venv/bin` on the PATH (as a new user's shell lacks it) and runs `ycsb-runner`
    commands: the block runs verbatim in bash, from the checkout, with a PATH that has no `.venv/bin`.
    Issue 51: the same for every such block of the documentation site (Getting started)."""
    import os
    import subprocess

    blocks = _activate_blocks()
    assert blocks[0][0] == "README.md" and len(blocks) >= 2
    venv_bin = str(ROOT / ".venv" / "bin")
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p.rstrip("/") != venv_bin)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "YCSB_RUNNER_RESULTS")}
    ran: set[str] = set()
    for page, commands in blocks:
        assert commands[0] == ". .venv/bin/activate" and len(commands) > 1, page
        assert all(c.startswith("ycsb-runner ") for c in commands[1:]), (page, commands)
        bare = subprocess.run(
            ["bash", "-c", commands[1]], cwd=ROOT, env={**env, "PATH": path}, capture_output=True, text=True
        )
        assert bare.returncode == 127, "ycsb-runner is found without the block's first line"
        for command in commands[1:]:  # each as the page prints it, after its first line
            if command in ran:
                continue
            ran.add(command)
            done = subprocess.run(
                ["bash", "-e", "-c", f"{commands[0]}\n{command}"],
                cwd=ROOT,
                env={**env, "PATH": path, "COLUMNS": "100"},
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, (page, command, done.stderr)
            assert done.stdout.strip() and "Traceback" not in done.stderr, (page, command)

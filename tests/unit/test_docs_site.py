"""Issue 51: a README of at most 150 lines, and a documentation site (mkdocs.yml, docs/) that lost nothing of
the old README, names only pictures that exist or that `make docs-figures` makes, includes only files that
exist, and whose command lines name real commands and options (and the bench/render ones run as --dry-run).
The strict build itself (`make docs`) is run by .ci/run."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import typer
from docs_pages import DOCS, README, ROOT, argv, code_blocks, command_lines, pages
from typer.testing import CliRunner

from ycsb_runner.cli import app

# Every `##`/`###` section heading of the README before the site (`git show main:README.md`, issue 51):
# each must be a heading somewhere in docs/, where the other branches' README additions are placed too.
OLD_README_SECTIONS = [
    "Commands",
    "findmax: the most ops/s under a latency bound",
    "Nightly regression checks",
    "A regression stays open until someone accepts it",
    "Reproducing a study",
    "What does audit logging cost on my instance?",
    "`restart`: restart the server with other arguments",
    "`command`: your own commands for on, off and status",
    "Scaling a study down",
    "Several load generators",
    "Installing it as a package",
    "Where YCSB comes from",
    "Where the two bindings still differ",
    "The embedded server",
    "Result folders",
    "Limits on input",
    "Exit codes",
]
FIGURES_SCRIPT = ROOT / "tools" / "docs-figures.sh"


def _headings(page: str) -> list[str]:
    """The Markdown headings of *page* outside fenced blocks (a ``# comment`` in a console block is none)."""
    out, fenced = [], False
    for line in page.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+?)\s*$", line)):
            out.append(m.group(1))
    return out


def test_the_readme_is_at_most_150_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 150


def test_every_section_of_the_old_readme_is_a_heading_in_the_site() -> None:
    found = {h for p in pages() if p != README for h in _headings(p.read_text(encoding="utf-8"))}
    missing = [h for h in OLD_README_SECTIONS if h not in found]
    assert not missing, f"sections of the old README found nowhere in docs/: {missing}"


def test_the_heading_scan_skips_fenced_blocks() -> None:
    page = "# Title\n\n```console\n## step 01-load\n```\n\n### `restart`: x\n"
    assert _headings(page) == ["Title", "`restart`: x"]


def _images() -> list[tuple[Path, Path]]:
    """(page, image) for every image a page shows, resolved against the page's folder."""
    out = []
    for page in pages():
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)", page.read_text(encoding="utf-8")):
            out.append((page, (page.parent / target).resolve()))
    return out


def test_every_picture_a_page_shows_exists_and_is_made_by_make_docs_figures() -> None:
    script = FIGURES_SCRIPT.read_text(encoding="utf-8")
    images = _images()
    assert len({img for _, img in images}) >= 4  # the report, its time series, the nightly report and chart
    for page, image in images:
        where = f"{page.relative_to(ROOT)} shows {image.relative_to(ROOT)}"
        assert image.is_relative_to(DOCS / "images"), f"{where}: pictures live in docs/images/"
        assert f'"$OUT/{image.name}"' in script, f"{where}: `make docs-figures` does not make it"
        assert image.exists(), f"{where}: missing; run `make docs-figures`"
        assert image.stat().st_size < 300_000, f"{where}: {image.stat().st_size:,} bytes"


def test_every_included_file_exists() -> None:
    """``--8<-- "FILE[:START[:END]]"`` (pymdownx.snippets, paths from the checkout): the build fails on a
    missing one too; here it fails in the unit tests, and an included output file is one the script makes."""
    script = FIGURES_SCRIPT.read_text(encoding="utf-8")
    included = [
        (p, m) for p in pages() for m in re.findall(r'--8<-- "([^":]+)', p.read_text(encoding="utf-8"))
    ]
    assert included
    for page, name in included:
        assert (ROOT / name).is_file(), (page.name, name)
        if name.startswith("docs/images/"):
            assert f'"$OUT/{Path(name).name}"' in script, (page.name, name)


def test_the_generated_suite_keys_are_up_to_date() -> None:
    from cogapp import Cog

    assert Cog().main(["cog", "--check", str(DOCS / "reference" / "suite-file.md")]) == 0


def _command(path: list[str]) -> tuple[Any, list[str]]:
    """The (Typer's click) command an argv names (``regress accept``, ``server start``) and the rest."""
    cmd = typer.main.get_command(app)
    rest = list(path)
    while hasattr(cmd, "commands") and rest and rest[0] in cmd.commands:
        cmd = cmd.commands[rest.pop(0)]
    default = getattr(cmd, "default_command", None)
    if hasattr(cmd, "commands") and default:  # a group with a default command: regress SUITE
        cmd = cmd.commands[default] if isinstance(default, str) else default
    return cmd, rest


def _doc_commands() -> list[tuple[str, str, list[str]]]:
    return [
        (p.relative_to(ROOT).as_posix(), line, shown)
        for p in pages()
        for block in code_blocks(p.read_text(encoding="utf-8"), ("sh", "console", "bash"))
        for line, shown in command_lines(block)
    ]


def test_the_docs_show_commands_and_what_they_print() -> None:
    found = _doc_commands()
    assert len(found) >= 40 and sum(1 for *_, shown in found if shown) >= 10


def test_the_command_scan_keeps_the_output_shown() -> None:
    block = "$ echo x\n$ MONGODB_URL=u ycsb-runner bench q \\\n  --set a=1\nerror: bad\n$ ycsb-runner runs\n"
    assert command_lines(block) == [
        ("MONGODB_URL=u ycsb-runner bench q    --set a=1", ["error: bad"]),
        ("ycsb-runner runs", []),
    ]
    assert argv("ycsb-runner regress quick --report r; echo $?") == (
        {},
        ["regress", "quick", "--report", "r"],
    )


# render needs no server: a URL that nothing answers shows the plan as for a server of yours
RENDER_URL = "mongodb://127.0.0.1:27017/ycsb"


@pytest.mark.parametrize(("page", "line", "shown"), _doc_commands())
def test_each_command_line_names_a_real_command_and_its_options(
    page: str, line: str, shown: list[str]
) -> None:
    """Every ``ycsb-runner`` line of a shell or console block: the command exists and every option it
    gives is one of that command's. ``table``, ``compare``, ``suites`` and ``reference`` lines whose runs
    are checked in run, and every output line the page shows is in what they print (spacing aside).
    ``bench`` lines on the embedded server run as ``--dry-run`` and
    ``render`` lines as they are (no server, no JVM): they exit 0, or, where the page shows an ``error:``
    line, exit 2 with that error; the first line of a shown plan (``# suite NAME: ...``) is the one printed.
    A line that sets ``MONGODB_URL``, uses ``--client`` or names a suite file of the reader's needs a real
    MongoDB or machine and is checked for its command and options only."""
    env, args = argv(line)
    cmd, rest = _command(args)
    known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help", "-h"}
    given = [w.split("=", 1)[0] for w in rest if w.startswith("-") and w != "-"]
    assert set(given) <= known, f"{page}: {line}: unknown options {set(given) - known}"
    own_file = bool(rest) and rest[0].endswith(".toml") and not (ROOT / rest[0]).exists()
    if cmd.name in ("table", "compare", "suites", "reference") and "MONGODB_URL" not in env:
        paths = [w for w in rest if "/" in w]
        if all((ROOT / w).exists() for w in paths):  # a checked-in run: it runs, and prints what is shown
            res = CliRunner().invoke(app, args, env={"COLUMNS": "100"}, catch_exceptions=False)
            assert res.exit_code == 0, f"{page}: {line}: {res.output[-500:]}"
            printed = " ".join(res.stdout.split())
            for shown_line in shown:
                assert " ".join(shown_line.split()) in printed, (page, line, shown_line)
        return
    if cmd.name not in ("bench", "render") or "MONGODB_URL" in env or "--client" in rest or own_file:
        return
    run = [*args, "--dry-run"] if cmd.name == "bench" else args
    url = RENDER_URL if cmd.name == "render" else ""
    res = CliRunner().invoke(app, run, env={"COLUMNS": "100", "MONGODB_URL": url})
    errors = [s for s in shown if s.startswith("error: ")]
    if errors:
        code = getattr(res.exception, "exit_code", res.exit_code)  # a UserError: main() prints it, exits 2
        assert code == 2 and f"error: {res.exception}" == errors[0], (page, line, res.output[-300:])
    else:
        assert res.exit_code == 0, f"{page}: {line}: {res.output[-500:]}"
    if shown and shown[0].startswith("# suite "):
        assert res.stdout.startswith(shown[0].split(":")[0] + ":"), (page, line)


def test_the_readme_links_only_files_that_exist() -> None:
    """The README is read on the forge, not built by MkDocs: its relative links are checked here."""
    links = re.findall(r"\]\(([^)#\s]+)", README.read_text(encoding="utf-8"))
    local = [t for t in links if "://" not in t]
    assert len(local) >= 10
    assert [t for t in local if not (ROOT / t).exists()] == []

"""A format registered from outside output.py (here: from the test) is one Renderer, and every command prints
through it: ``table`` (a run's study table, through ``emit``) and ``parse`` (a document of its own, given to
the toy as its views) both reach the toy."""

from __future__ import annotations

from pathlib import Path

import pytest

from ycsb_runner.cli.analyse import table_cmd
from ycsb_runner.cli.parse import _run as parse_run
from ycsb_runner.errors import UserError
from ycsb_runner.present import output
from ycsb_runner.present.document import Table

DATA = Path(__file__).parents[1] / "data"


class Toy(output.Renderer):
    """Each table as one line: its title and its size."""

    name = "toy"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def table(self, table: Table) -> None:
        self.seen.append(f"{table.title}: {len(table.frame)} rows x {len(table.frame.columns)} columns")


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Toy:
    renderer = Toy()
    monkeypatch.setitem(output.FORMATS, "toy", renderer)
    return renderer


def test_two_commands_print_through_a_registered_format(toy: Toy) -> None:
    table_cmd(DATA / "runs" / "audit-analyse", fmt="toy")  # type: ignore[arg-type]
    parse_run([DATA / "ycsb" / "flaky.stdout", DATA / "ycsb" / "hdr_op.stdout"], None, "toy", "operations")

    study, *parsed = toy.seen
    assert (
        study
        == "audit-analyse-tiny: UNVERIFIED audit off → on per mix (server-side figures): 1 rows x 33 columns"
    )
    assert [line.split(": ")[0] for line in parsed] == [
        str(DATA / "ycsb" / "flaky.stdout"),
        str(DATA / "ycsb" / "hdr_op.stdout"),
    ]
    assert all(" rows x " in line and ": 0 rows" not in line for line in parsed), parsed
    assert "toy" in output.format_names()


def test_an_unregistered_format_is_refused() -> None:
    with pytest.raises(UserError, match="unknown --format 'toy': use one of table, csv, json, markdown"):
        parse_run([DATA / "ycsb" / "flaky.stdout"], None, "toy", "operations")


def test_the_cli_accepts_a_format_registered_after_import(toy: Toy) -> None:
    """``--format`` is checked against the registry when the command runs, not against the names known when
    the CLI was imported: the toy (registered by the fixture, long after import) is accepted."""
    from typer.testing import CliRunner

    from ycsb_runner.cli import app

    for argv in (["table", str(DATA / "runs" / "audit-analyse")], ["reference", "list"]):
        res = CliRunner().invoke(app, [*argv, "--format", "toy"])
        assert res.exit_code == 0, res.output
    assert [line.split(":")[0] for line in toy.seen] == ["audit-analyse-tiny", "Reference tables"]
    refused = CliRunner().invoke(app, ["reference", "list", "--format", "tsv"])
    assert (
        refused.exit_code == 2
        and "'tsv' is not one of 'table', 'csv', 'json', 'markdown', 'toy'" in refused.output
    )

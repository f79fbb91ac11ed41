"""Issue 21's pure cases: properties escaping, CSV formulas, the lock's keys and folder, cut load captures,
masked --set values and history messages (the fault suite, tests/integration/test_faults_hostile.py, plays
the rest with real processes)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ycsb_runner.errors import UserError
from ycsb_runner.parse import parse_output
from ycsb_runner.prepare.commandline import _propescape, render_step
from ycsb_runner.prepare.plan import build_plan
from ycsb_runner.prepare.suite import load_suite
from ycsb_runner.safe.lock import lock_dir, target_lock

# The names this issue added are imported in the tests that use them, so that each test fails on its own
# against code without them.

DATA = Path(__file__).parent.parent / "data" / "ycsb"


def _logical_lines(text: str) -> list[str]:
    """The logical lines java.util.Properties.load reads (comments and blank lines dropped): a line ends at
    \\n or \\r unless an odd number of backslashes precedes it."""
    out, current = [], ""
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        stripped = line.lstrip(" \t\f")
        if not current and (not stripped or stripped[0] in "#!"):
            continue
        tail = len(stripped) - len(stripped.rstrip("\\"))
        if tail % 2:
            current += stripped[:-1]
            continue
        out.append(current + stripped)
        current = ""
    return out


# --- item 3 ---


@pytest.mark.parametrize("value", ["x\roperationcount=7", "x\noperationcount=7", "x\\\noperationcount=7"])
def test_a_value_stays_one_property(value: str, tmp_path: Path) -> None:
    suite = load_suite("quick", [f"properties.baz={value}"])
    step = next(s for s in build_plan(suite).steps if s.kind == "run")
    rendered = render_step(
        step,
        suite,
        url="mongodb://127.0.0.1:1/y",
        java="java",
        classpath=["lib/*"],
        binding_class="B",
        workload_file=tmp_path / "w",
        connection_file=tmp_path / "c",
    )
    lines = _logical_lines(rendered.workload_properties)
    assert [ln for ln in lines if ln.startswith("operationcount=")] == [
        f"operationcount={suite.run.operationcount}"
    ]
    assert len(lines) == len(rendered.properties)
    assert "\r" not in rendered.workload_properties


def test_keys_comments_and_non_ascii_are_escaped() -> None:
    from ycsb_runner.prepare.commandline import _propcomment, _propkey

    assert _propkey("a=b:c d#!") == "a\\=b\\:c\\ d\\#\\!"
    assert _propescape(" lead\ttab\fé😀") == "\\ lead\\ttab\\f\\u00e9\\ud83d\\ude00"
    assert "\n" not in _propcomment("suite\nexportfile=/x") and "\r" not in _propcomment("a\rb")


def test_names_that_become_folders_are_checked(tmp_path: Path) -> None:
    for bad in ("../x", "a/b", "=1+2", "-x", "@x", "a\nb", ".hidden", "x" * 101):
        suite = tmp_path / "s.toml"
        suite.write_text(
            f'name = "ok"\n[dataset]\nrecordcount = 1\n[run]\noperationcount = 1\n'
            f'[[mix]]\nname = "{bad.replace(chr(10), chr(92) + "n")}"\nread = 1.0\n'
        )
        with pytest.raises(UserError, match="letters, digits"):
            load_suite(str(suite))


# --- item 6 ---


def test_secret_overrides_are_masked() -> None:
    from ycsb_runner.safe.secrets import mask_override

    assert mask_override("mongodb.url_options.myApiToken=abc") == "mongodb.url_options.myApiToken=***"
    assert mask_override("mongodb.url_options.proxyPassword=abc") == "mongodb.url_options.proxyPassword=***"
    assert mask_override("threads=4") == "threads=4"
    assert mask_override("properties.u=mongodb://u:pw@h/") == "properties.u=mongodb://u:***@h/"
    suite = load_suite("quick", ["mongodb.url_options.clientSecret=s3"])
    assert suite.describe_scaling()["overrides"] == ["mongodb.url_options.clientSecret=***"]


# --- item 7 ---


def test_formula_cells_get_a_quote_and_numbers_do_not() -> None:
    from ycsb_runner.safe.files import formula_safe

    df = pd.DataFrame(
        {
            "name": [
                "=1+2",
                "+cmd",
                "-2+3+cmd|' /C calc'!A0",
                "@SUM(A1)",
                "\tx",
                "\rx",
                "-3.5",
                "+2 %",
                "-",
                "ok",
            ],
            "n": [-1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
        }
    )
    out = formula_safe(df)
    assert out["name"].tolist()[:6] == ["'" + v for v in df["name"][:6]]
    assert out["name"].tolist()[6:] == ["-3.5", "+2 %", "-", "ok"]
    assert out["n"].tolist() == df["n"].tolist()
    assert formula_safe(pd.DataFrame({"=x": [1]})).columns.tolist() == ["'=x"]


# --- item 8 ---


def test_spellings_of_one_server_share_a_lock_key() -> None:
    from ycsb_runner.safe.lock import target_keys

    assert set(target_keys("mongodb://localhost:5/")) & set(target_keys("mongodb://127.0.0.1:5/"))
    assert set(target_keys("mongodb://u:p@127.0.0.1:5,other.invalid:6/?replicaSet=rs")) >= {"127.0.0.1:5"}
    # a member the replica set reports is the same target as a URL naming only another member
    assert "127.0.0.1:7" in target_keys("mongodb://127.0.0.1:5/?replicaSet=rs", members=("127.0.0.1:7",))
    assert target_keys(None) == ["embedded"]


HOLD = """
import sys, time
from ycsb_runner.safe.lock import target_lock
with target_lock(sys.argv[1], suite="quick") as note:
    note("checkout-a")
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_second_checkout_meets_the_same_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ycsb_runner.safe.lock import target_keys

    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.delenv("YCSB_RUNNER_LOCK_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("YCSB_RUNNER_CACHE", str(tmp_path / "checkout-b" / ".cache"))
    assert lock_dir() == runtime / "ycsb-runner" / "locks"
    env = {"XDG_RUNTIME_DIR": str(runtime), "YCSB_RUNNER_CACHE": str(tmp_path / "checkout-a" / ".cache")}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, "127.0.0.1:5"],
        stdout=subprocess.PIPE,
        text=True,
        env={**env, "PATH": "/usr/bin:/bin"},
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with (
            pytest.raises(UserError, match="checkout-a"),
            target_lock(target_keys("mongodb://localhost:5"), suite="q"),
        ):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_folder_someone_else_can_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "runtime"
    (runtime / "ycsb-runner").mkdir(parents=True)
    (runtime / "ycsb-runner").chmod(0o777)
    monkeypatch.delenv("YCSB_RUNNER_LOCK_DIR", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    with pytest.raises(UserError, match="not private to you"), target_lock("127.0.0.1:5", suite="q"):
        pass


# --- item 13 ---


@pytest.mark.parametrize("lines", [2, 3, 12, 18])
def test_a_cut_load_capture_is_truncated(lines: int) -> None:
    whole = (DATA / "binding-load.stdout").read_bytes()
    cut = b"".join(whole.splitlines(keepends=True)[:lines])
    run = parse_output(cut, b"")
    assert run.completion.status == "truncated", (lines, run.completion)
    assert parse_output(whole, b"").completion.status == "completed"


# --- item 15 ---


def test_history_errors_are_cut_at_a_word() -> None:
    from ycsb_runner.runs.history import _brief

    text = (
        "127.0.0.1:1: [Errno 111] Connection refused "
        + "word " * 60
        + ", Timeout: 10s, Topology Description: x"
    )
    short = _brief(text)
    assert short.endswith(" ...") and len(short) <= 165
    assert short.removesuffix(" ...").split()[-1] == "word"
    assert "Topology" not in _brief("a b, Topology Description: <...>") and _brief("a b") == "a b"

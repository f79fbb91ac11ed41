"""Suites: loading, overrides, scaling, validation (with hypothesis), planning and golden renders."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from cli_process import run_main
from hypothesis import given, settings
from hypothesis import strategies as st
from property_examples import examples

from ycsb_runner.prepare.commandline import describe_plan
from ycsb_runner.prepare.plan import MeasuredRates, build_plan
from ycsb_runner.prepare.suite import SuiteError, builtin_suites, load_suite

GOLDEN = Path(__file__).parents[1] / "golden"
URL = "mongodb://root:s3cret@host:3717/admin?replicaSet=x"


def _render(name: str, *overrides: str) -> str:
    plan = build_plan(load_suite(name, list(overrides)), MeasuredRates(embedded=False))  # URL's server
    return describe_plan(
        plan, url=URL, classpath=["<YCSB>/lib/*"], binding_class="ycsbrunner.binding.MongoDbClient"
    )


@pytest.mark.parametrize("name", sorted(builtin_suites()))
def test_golden_render(name: str) -> None:
    text = _render(name)
    path = GOLDEN / f"render-{name}.txt"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(text)
    assert text == path.read_text(), f"render of {name} changed; UPDATE_GOLDEN=1 pytest {__file__} to accept"


def test_alibaba_render_matches_the_study() -> None:
    text = _render("alibaba-audit")
    runs = [ln for ln in text.splitlines() if ln.startswith("ycsb:  ./bin/ycsb run")]
    assert len(runs) == 12
    assert len([ln for ln in text.splitlines() if ln.startswith("ycsb:  ./bin/ycsb load")]) >= 1
    for ln in runs:
        for needle in (
            "recordcount=10000000",
            "operationcount=500000000",
            "requestdistribution=zipfian",
            "-threads 300",
            "-target 100000",
        ):
            assert needle in ln
    assert "s3cret" not in text
    expected = {
        "insert100": (1, 0, 0, "insert"),
        "update100": (0, 0, 1, "update"),
        "insert50_read50": (0.5, 0.5, 0, "insert, read"),
        "read50_update50": (0, 0.5, 0.5, "read, update"),
        "insert30_read70": (0.3, 0.7, 0, "insert, read"),
        "read70_update30": (0, 0.7, 0.3, "read, update"),
    }
    for mix, (ins, rd, up, audited) in expected.items():
        block = [
            ln
            for ln in runs
            if f"insertproportion={ins:g} " in ln
            and f"readproportion={rd:g} " in ln
            and f"updateproportion={up:g} " in ln
        ]
        assert len(block) == 2, mix  # audit off and on
        # the switch step before the mix's "on" run audits exactly the mix's operations
        step = re.search(rf"## step \d+-audit-{mix}-audit-on .*\n(.*)\n", text)
        assert step is not None, mix
        assert step.group(1).startswith(f"audit on: {audited} ("), (mix, step.group(1))


def test_tencent_threads_corrects_95_5_and_uses_w0() -> None:
    text = _render("tencent-threads")
    runs = [ln for ln in text.splitlines() if ln.startswith("ycsb:  ./bin/ycsb run")]
    assert sum("readproportion=0.95 -p updateproportion=0.05" in ln for ln in runs) == 2
    assert all("w=0" in ln for ln in text.splitlines() if ln.startswith("ycsb:"))
    assert any("readproportion=0.5" in n for n in load_suite("tencent-threads").notes)


def test_tencent_mongodb44_sizes() -> None:
    s = load_suite("tencent-mongodb44", ["size=4C8G"])
    assert s.dataset.recordcount == 4_000_000 and s.run.threads == (16,)
    s = load_suite("tencent-mongodb44", ["size=24C128G", "threads=4"])
    assert s.dataset.recordcount == 64_000_000 and s.run.threads == (4,)
    with pytest.raises(SuiteError, match="did you mean '4C8G'"):
        load_suite("tencent-mongodb44", ["size=4C8"])


def test_scale_is_recorded() -> None:
    s = load_suite("alibaba-audit", scale=0.001)
    assert (s.dataset.recordcount, s.run.operationcount, s.scale) == (10_000, 500_000, 0.001)


def _write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "s.toml"
    p.write_text(body)
    return p


BASE = """name = "x"
[dataset]
recordcount = 100
[run]
threads = [2]
operationcount = 1000
[[mix]]
name = "m"
read = 0.5
update = 0.5
"""


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (
            lambda b: b.replace("threads = [2]", "threds = [2]"),
            r"line 5: run.threds: unknown key \(did you mean 'threads'\?\)",
        ),
        (lambda b: b.replace("update = 0.5", "update = 0.7"), r"proportions sum to 1.2, not 1"),
        (
            lambda b: b.replace("recordcount = 100", "recordcount = -5"),
            r"dataset.recordcount: must be positive",
        ),
        (
            lambda b: (
                b.replace("operationcount = 1000", "maxexecutiontime = 5")
                + 'requestdistribution = "zipfian"\n'
            ),
            r"zipfian, which needs operationcount",
        ),
        (lambda b: b.replace("threads = [2]", "threads = [20]\ntarget = 10"), r"below the thread count"),
        (lambda b: b + '[audit]\nstates = ["sometimes"]\n', r"unknown audit state"),
        (lambda b: b.replace('name = "x"', 'name = "x'), r"invalid TOML"),
    ],
)
def test_validation_messages(tmp_path: Path, mutate, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        load_suite(str(_write(tmp_path, mutate(BASE))))


def test_broken_suite_cli_one_line_nothing_run(tmp_path: Path) -> None:
    p = _write(tmp_path, BASE.replace("threads = [2]", "threds = [2]"))
    proc = run_main("bench", str(p), "--results", str(tmp_path / "r"))
    assert proc.returncode == 2
    assert "threds" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "r").exists()


def test_audit_on_without_strategy_fails_before_running(tmp_path: Path) -> None:
    proc = run_main(
        "bench",
        "alibaba-audit",
        "--scale",
        "0.0001",
        "--results",
        str(tmp_path / "r"),
        env=dict(os.environ, MONGODB_URL="mongodb://127.0.0.1:1/ycsb"),
    )
    assert proc.returncode != 0
    assert "--audit-strategy" in proc.stderr
    assert not (tmp_path / "r").exists()


def test_plan_reloads_after_inserts_and_interleaves() -> None:
    plan = build_plan(load_suite("alibaba-audit", ["repetitions=2"]))
    kinds = [(s.kind, s.mix.name if s.mix else None, s.audit) for s in plan.steps]
    runs = [(m, a) for k, m, a in kinds if k == "run"]
    assert runs[:4] == [("insert100", "off"), ("insert100", "on"), ("insert100", "on"), ("insert100", "off")]
    # every run after an insert run is preceded by a load
    prev_insert = False
    for s in plan.steps:
        if s.kind == "run":
            if prev_insert:
                raise AssertionError(f"{s.label} runs on a dataset changed by inserts")
            prev_insert = s.mix.insert > 0
        elif s.kind == "load":
            prev_insert = False


# --- property-based: any valid suite renders; any invalid one is rejected with a SuiteError ----------------

props = st.fixed_dictionaries(
    {
        "read": st.integers(0, 10),
        "update": st.integers(0, 10),
        "insert": st.integers(0, 10),
        "scan": st.integers(0, 10),
    }
)


@settings(max_examples=examples(60), deadline=None)
@given(
    p=props,
    threads=st.lists(st.integers(1, 64), min_size=1, max_size=3, unique=True),
    rc=st.integers(1, 10**7),
    dist=st.sampled_from(["uniform", "zipfian", "latest"]),
    reps=st.integers(1, 3),
    order=st.sampled_from(["blocked", "interleaved"]),
    audit=st.sampled_from([[], ["off", "on"]]),
)
def test_any_valid_suite_renders(tmp_path_factory, p, threads, rc, dist, reps, order, audit) -> None:
    total = sum(p.values())
    if total == 0:
        p = {"read": 1, "update": 0, "insert": 0, "scan": 0}
        total = 1
    fr = {k: v / total for k, v in p.items()}
    fr["read"] = max(0.0, round(1.0 - fr["update"] - fr["insert"] - fr["scan"], 12))
    body = (
        f'name = "h"\nrepetitions = {reps}\norder = "{order}"\n[dataset]\nrecordcount = {rc}\n'
        f"[run]\nthreads = {threads}\noperationcount = 5000\n[audit]\nstates = {audit!r}\n"
        f'[[mix]]\nname = "m"\nrequestdistribution = "{dist}"\n'
        + "".join(f"{k} = {v!r}\n" for k, v in fr.items())
    )
    path = tmp_path_factory.mktemp("h") / "s.toml"
    path.write_text(body.replace("'", '"'))
    plan = build_plan(load_suite(str(path)))
    text = describe_plan(plan, url=URL, classpath=["cp"], binding_class="b")
    assert text.count("./bin/ycsb run") == len(threads) * reps * max(1, len(audit))


@settings(max_examples=examples(150), deadline=None)
@given(junk=st.text(max_size=300))
def test_any_text_is_a_suite_or_a_suite_error(tmp_path_factory, junk: str) -> None:
    path = tmp_path_factory.mktemp("j") / "s.toml"
    path.write_text(junk)
    try:
        load_suite(str(path))
    except SuiteError as err:
        message = str(err)
        assert message.startswith("suite s.toml"), message  # names the file
        assert "\n" not in message, message


@settings(max_examples=examples(150), deadline=None)
@given(key=st.from_regex(r"[a-z_.]{1,20}", fullmatch=True), value=st.text(max_size=20))
def test_any_override_applies_or_is_rejected(key: str, value: str) -> None:
    if "\n" in value or "\r" in value:
        return
    try:
        load_suite("quick", [f"{key}={value}"])
    except SuiteError as err:
        message = str(err)
        # the error names the setting it refuses, on one line
        assert message.startswith(("--set", "suite quick.toml")), message
        assert key.split(".")[0] in message or "expected KEY=VALUE" in message, message
        assert "\n" not in message


def test_schema_follows_the_dataclasses() -> None:
    """One source: every dataclass field is a key of its section, with the default the dataclass gives."""
    import dataclasses

    from ycsb_runner.prepare.suite import SCHEMA, SECTIONS, Dataset

    for section, cls in SECTIONS.items():
        names = {f.metadata.get("key", f.name) for f in dataclasses.fields(cls) if f.metadata.get("toml", 1)}
        assert set(SCHEMA[section]) == names, section
    assert SCHEMA["run"]["threads"] is list and SCHEMA["dataset"]["recordcount"] is int
    assert SCHEMA[""]["study"] is str and "path" not in SCHEMA[""]
    suite = load_suite(str(Path(__file__).parents[1] / "suites" / "tiny.toml"))
    assert suite.dataset.fieldcount == Dataset.fieldcount == 10  # the default from the dataclass


def test_study_key_is_checked(tmp_path: Path) -> None:
    src = (Path(__file__).parents[1] / "suites" / "tiny.toml").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(src.replace('name = "tiny"', 'name = "tiny"\nstudy = "tencent-mongo44"'))
    with pytest.raises(SuiteError, match=r"bad.toml, line 3: study: unknown study 'tencent-mongo44'"):
        load_suite(str(bad))
    good = tmp_path / "good.toml"
    good.write_text(src.replace('name = "tiny"', 'name = "tiny"\nstudy = "tencent-threads"'))
    assert load_suite(str(good)).study == "tencent-threads"


def test_a_ycsb_property_with_dots_is_set_as_one_key() -> None:
    # YCSB's property names have dots (mongodb.upsert, basicdb.verbose): --set keeps them whole
    suite = load_suite("quick", ["p.mongodb.upsert=true", "properties.basicdb.verbose=false"])
    assert suite.properties["mongodb.upsert"] == "true"
    assert suite.properties["basicdb.verbose"] == "false"
    load = load_suite("quick", ["dataset.properties.mongodb.upsert=true"]).dataset.properties
    assert load["mongodb.upsert"] == "true"

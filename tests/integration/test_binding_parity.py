"""Parity with the stock YCSB 0.17.0 binding (issue 15) and no credential in YCSB's output (issue 9 item 1).

Real YCSB 0.17.0 with ycsb-runner's binding against the embedded server: the effective driver settings the
binding reads from the driver and prints on stderr, the stock mapping of the deprecated properties,
compressors, the suite switch ``mongodb.driver_defaults`` through ``run_bench`` into the manifest, and the
password and secret URL options absent from everything YCSB printed.
"""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path

import pytest

from ycsb_runner.bench import BenchOptions, run_bench
from ycsb_runner.errors import UserError
from ycsb_runner.execute.driver_settings import (
    common_settings,
    parse_settings_line,
    settings_from_output,
)
from ycsb_runner.install import find_java, locate_ycsb
from ycsb_runner.install.cds import jvm_flags, usable_archive
from ycsb_runner.install.ycsb import OWN_BINDING_CLASS, STOCK_BINDING_CLASS
from ycsb_runner.prepare.commandline import describe_plan
from ycsb_runner.prepare.plan import build_plan
from ycsb_runner.prepare.suite import SuiteError, builtin_suites, load_suite

TINY = str(Path(__file__).parents[1] / "suites" / "tiny.toml")

# --- the parser (pure) ---

LINE = (
    'ycsb-runner-driver-settings {"driver_defaults": "stock", "driver_version": "5.14.0", "write_concern": '
    '{"w": 1, "journal": true, "wtimeout_ms": null}, "read_preference": "primary", "read_concern": null, '
    '"retry_writes": false, "retry_reads": false, "max_pool_size": 100, "min_pool_size": 0, '
    '"max_connecting": 100, "max_wait_time_ms": 120000, "stock_wait_queue_limit": 500, "compressors": '
    '["snappy"], "tls": false}'
)


def test_parse_settings_line() -> None:
    got = parse_settings_line(LINE + "\n")
    assert got is not None
    assert got["write_concern"] == {"w": 1, "journal": True, "wtimeout_ms": None}
    assert (got["retry_writes"], got["retry_reads"], got["max_connecting"]) == (False, False, 100)
    assert got["compressors"] == ["snappy"]
    assert len(got) == 14
    assert parse_settings_line("[OVERALL], RunTime(ms), 10") is None
    assert parse_settings_line("  ycsb-runner-driver-settings {}") is None  # only at the start of a line


def test_parse_settings_line_keeps_only_known_keys() -> None:
    line = 'ycsb-runner-driver-settings {"tls": true, "url": "mongodb://u:pw@h", '
    line += '"write_concern": {"w": 0, "j": 1}}'
    assert parse_settings_line(line) == {"write_concern": {"w": 0}, "tls": True}
    batch = 'ycsb-runner-driver-settings {"batch": {"batchsize": 7, "last_batch": "x", "pw": "s3cret"}}'
    assert parse_settings_line(batch) == {"batch": {"batchsize": 7, "last_batch": "x"}}
    assert parse_settings_line('ycsb-runner-driver-settings {"batch": "all"}') == {}


def test_parse_settings_line_cut_off_or_not_an_object() -> None:
    cut = parse_settings_line(LINE[:80])
    assert cut is not None and cut["error"].startswith("unreadable driver settings line")
    assert parse_settings_line("ycsb-runner-driver-settings [1, 2]") == {
        "error": "the driver settings line does not hold a JSON object"
    }


def test_common_settings() -> None:
    a = {"retry_writes": False, "max_pool_size": 100, "compressors": []}
    b = {"retry_writes": False, "max_pool_size": 300, "compressors": []}
    assert common_settings([a, b]) == {
        "retry_writes": False,
        "compressors": [],
        "varies_by_step": ["max_pool_size"],
    }
    assert common_settings([a]) == {**a, "varies_by_step": []}
    assert common_settings([a, {"retry_writes": False, "compressors": []}])["varies_by_step"] == [
        "max_pool_size"
    ]
    assert common_settings([]) is None


def test_suite_switch_reaches_the_workload_properties() -> None:
    url = "mongodb://h:27017/ycsb"
    for value in ("stock", "driver"):
        plan = build_plan(load_suite("quick", [f"mongodb.driver_defaults={value}"]))
        text = describe_plan(
            plan, url=url, classpath=["x/*"], binding_class=OWN_BINDING_CLASS, show_properties=True
        )
        assert text.count(f"mongodb.driver_defaults={value}\n") == 4  # every step's workload.properties
    with pytest.raises(SuiteError, match="must be stock .* or driver"):
        load_suite("quick", ["mongodb.driver_defaults=modern"])
    for name in builtin_suites():
        assert load_suite(name).mongodb.driver_defaults == "stock"
        assert 'driver_defaults = "stock"' in builtin_suites()[name].read_text(), name  # said explicitly


def test_driver_defaults_driver_needs_the_project_binding() -> None:
    plan = build_plan(load_suite("quick", ["mongodb.driver_defaults=driver"]))
    with pytest.raises(UserError, match="driver_defaults = driver needs ycsb-runner's binding"):
        describe_plan(plan, url="mongodb://h/ycsb", classpath=["x/*"], binding_class=STOCK_BINDING_CLASS)


# --- real YCSB against the embedded server ---


def _own_binding(ycsb) -> None:
    if ycsb.binding_class != "ycsbrunner.binding.MongoDbClient":
        pytest.skip("YCSB_HOME selects the stock binding, which reports no driver settings")


@functools.cache
def _archive_flags() -> tuple[str, ...]:
    """The JVM options that start YCSB from set-up's class-data archive, as the runner's steps (and
    conftest's ``run_ycsb``) start it: the Java and the YCSB of the ``java`` and ``ycsb`` fixtures."""
    return tuple(jvm_flags(usable_archive(find_java(), locate_ycsb())))


def _ycsb(
    ycsb, java: str, tmp: Path, url: str, props: dict[str, object], threads: int = 2, phase: str = "load"
):
    """Real YCSB with the URL (and every property) in a -P file, as ycsb-runner passes them: YCSB itself
    echoes its -p arguments, so only a properties file keeps the URL out of its output."""
    conf = tmp / f"conn-{len(list(tmp.iterdir()))}.properties"
    lines = [f"mongodb.url={url}", "workload=site.ycsb.workloads.CoreWorkload"]
    lines += [f"{k}={v}" for k, v in props.items()]
    conf.write_text("\n".join(lines) + "\n")
    argv = [java, *_archive_flags(), "-cp", ":".join(ycsb.classpath), "site.ycsb.Client"]
    argv.append("-load" if phase == "load" else "-t")
    argv += ["-db", ycsb.binding_class, "-P", str(conf), "-threads", str(threads), "-s"]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _opt(url: str, options: str) -> str:
    return url + ("&" if "?" in url else "?") + options


def _settings(stderr: str) -> dict:
    got = settings_from_output(stderr)
    assert got is not None, stderr[-2000:]
    return got


def _run_props(**extra: object) -> dict[str, object]:
    # a run on a collection that may be empty: reads find nothing, which YCSB counts as NOT_FOUND, not errors
    return {"recordcount": 20, "operationcount": 20, "table": "parity", **extra}


@pytest.mark.integration
def test_default_url_gets_the_stock_driver_defaults(ycsb, java_path, mongo_url, mongo, tmp_path) -> None:
    _own_binding(ycsb)
    mongo.ycsb.drop_collection("parity")
    rc, out, err = _ycsb(ycsb, java_path, tmp_path, mongo_url, _run_props())
    assert rc == 0 and "[INSERT], Return=OK, 20" in out, err[-2000:]
    s = _settings(err)
    assert s["driver_defaults"] == "stock"
    assert s["driver_version"] == ycsb.driver_version
    assert (s["retry_writes"], s["retry_reads"]) == (False, False)
    assert (s["max_pool_size"], s["max_connecting"], s["min_pool_size"]) == (100, 100, 0)
    assert s["max_wait_time_ms"] == 120000
    assert s["write_concern"] == {"w": None, "journal": None, "wtimeout_ms": None}
    assert (s["read_preference"], s["compressors"], s["tls"]) == ("primary", [], False)
    assert err.count("ycsb-runner-driver-settings ") == 1  # once per process, not once per thread


@pytest.mark.integration
def test_url_options_win_over_the_stock_defaults(ycsb, java_path, mongo_url, tmp_path) -> None:
    _own_binding(ycsb)
    url = _opt(mongo_url, "retryWrites=true&maxConnecting=5&w=1&maxPoolSize=7")
    rc, _out, err = _ycsb(ycsb, java_path, tmp_path, url, _run_props(), phase="run")
    assert rc == 0, err[-2000:]
    s = _settings(err)
    assert (s["retry_writes"], s["retry_reads"]) == (True, False)
    assert (s["max_connecting"], s["max_pool_size"]) == (5, 7)
    assert s["write_concern"]["w"] == 1


@pytest.mark.integration
def test_driver_defaults_driver_keeps_the_5x_defaults(ycsb, java_path, mongo_url, tmp_path) -> None:
    _own_binding(ycsb)
    rc, _out, err = _ycsb(
        ycsb, java_path, tmp_path, mongo_url, _run_props(**{"mongodb.driver_defaults": "driver"})
    )
    assert rc == 0, err[-2000:]
    s = _settings(err)
    assert s["driver_defaults"] == "driver"
    assert (s["retry_writes"], s["retry_reads"], s["max_connecting"]) == (True, True, 2)


@pytest.mark.integration
def test_driver_defaults_typo_is_refused(ycsb, java_path, mongo_url, tmp_path) -> None:
    _own_binding(ycsb)
    _rc, out, err = _ycsb(
        ycsb, java_path, tmp_path, mongo_url, _run_props(**{"mongodb.driver_defaults": "stok"})
    )
    assert "ERROR: mongodb.driver_defaults='stok' must be stock or driver" in err
    assert "[INSERT], Return=OK" not in out
    assert settings_from_output(err) is None


@pytest.mark.integration
@pytest.mark.parametrize("compressor", ["snappy", "zstd", "zlib"])
def test_compressors_are_available(ycsb, java_path, mongo_url, mongo, tmp_path, compressor: str) -> None:
    """The driver accepts the compressor (its jar is on the classpath) and the run completes. FerretDB 1.24
    offers no compression in its hello reply, so the wire stays uncompressed here: this shows the set-up
    works, not that the bytes were compressed."""
    _own_binding(ycsb)
    table = f"parity_{compressor}"
    mongo.ycsb.drop_collection(table)
    url = _opt(mongo_url, f"compressors={compressor}")
    rc, out, err = _ycsb(ycsb, java_path, tmp_path, url, _run_props(table=table))
    assert rc == 0 and "[INSERT], Return=OK, 20" in out, err[-2000:]
    assert _settings(err)["compressors"] == [compressor]
    assert "ERROR" not in err and "Exception" not in err, err[-2000:]
    assert mongo.ycsb[table].count_documents({}) == 20


# (properties, URL options) -> expected write concern / read preference / pool size, as the stock binding
# maps them (YCSB 0.17.0 OptionsSupport.updateUrl): an option already in the URL wins; "journaled" adds
# journal=true, which combines with a w= already there.
DEPRECATED = [
    (
        {"mongodb.writeConcern": "journaled"},
        "w=1",
        {"w": 1, "journal": True, "wtimeout_ms": None},
        "primary",
        100,
    ),
    (
        {"mongodb.writeConcern": "majority"},
        "w=1",
        {"w": 1, "journal": None, "wtimeout_ms": None},
        "primary",
        100,
    ),
    (
        {"mongodb.writeConcern": "acknowledged"},
        "",
        {"w": 1, "journal": None, "wtimeout_ms": None},
        "primary",
        100,
    ),
    (
        {"mongodb.readPreference": "secondary_preferred", "mongodb.maxconnections": "12"},
        "",
        {"w": None, "journal": None, "wtimeout_ms": None},
        "secondaryPreferred",
        12,
    ),
    (
        {"mongodb.maxconnections": "12"},
        "maxpoolsize=9",
        {"w": None, "journal": None, "wtimeout_ms": None},
        "primary",
        9,
    ),
]


@pytest.mark.integration
@pytest.mark.parametrize(("props", "options", "wc", "rp", "pool"), DEPRECATED)
def test_deprecated_properties_map_like_the_stock_binding(
    ycsb, java_path, mongo_url, tmp_path, props, options, wc, rp, pool
) -> None:
    _own_binding(ycsb)
    url = _opt(mongo_url, options) if options else mongo_url
    rc, _out, err = _ycsb(ycsb, java_path, tmp_path, url, _run_props(**props), phase="run")
    assert rc == 0, err[-2000:]
    s = _settings(err)
    assert (s["write_concern"], s["read_preference"], s["max_pool_size"]) == (wc, rp, pool)
    assert s["max_connecting"] == pool  # unthrottled up to the pool size


@pytest.mark.integration
@pytest.mark.parametrize(
    ("props", "message"),
    [
        ({"mongodb.writeConcern": "safe"}, "ERROR: mongodb.writeConcern='safe' is not one of"),
        ({"mongodb.readPreference": "any"}, "ERROR: mongodb.readPreference='any' is not one of"),
        (
            {"mongodb.maxconnections": "lots"},
            "ERROR: mongodb.maxconnections='lots' must be a positive integer",
        ),
    ],
)
def test_bad_deprecated_property_is_refused(ycsb, java_path, mongo_url, tmp_path, props, message) -> None:
    _own_binding(ycsb)
    _rc, out, err = _ycsb(ycsb, java_path, tmp_path, mongo_url, _run_props(**props))
    assert message in err
    assert "[INSERT], Return=OK" not in out


@pytest.mark.integration
def test_threads_beyond_the_38_wait_queue_are_reported(ycsb, java_path, mongo_url, tmp_path) -> None:
    """Driver 3.8 let at most maxPoolSize x waitQueueMultiple threads wait; 5.x has no limit, so say so."""
    _own_binding(ycsb)
    props = _run_props(
        **{"mongodb.maxconnections": "1", "mongodb.threadsAllowedToBlockForConnectionMultiplier": "1"}
    )
    rc, _out, err = _ycsb(ycsb, java_path, tmp_path, mongo_url, props, threads=3, phase="run")
    assert rc == 0, err[-2000:]
    assert _settings(err)["stock_wait_queue_limit"] == 1
    assert "WARNING: 3 threads exceed maxPoolSize 1 plus the 3.8 driver's wait queue of 1" in err
    rc, _out, err = _ycsb(ycsb, java_path, tmp_path, mongo_url, props, threads=2, phase="run")
    assert rc == 0 and "WARNING: " not in err, err[-2000:]


# --- no credential in YCSB's output ---

PASSWORD = "pw-Zq81xK"
TOKEN = "tok-Hv27Lm"


def _credentialed(url: str, options: str) -> str:
    # FerretDB 1.24 on SQLite accepts the PLAIN mechanism with any user and password (it refuses SCRAM).
    return _opt(
        url.replace("mongodb://", f"mongodb://benchuser:{PASSWORD}@"), "authMechanism=PLAIN&" + options
    )


@pytest.mark.integration
def test_no_secret_in_ycsb_output_of_a_good_run(ycsb, java_path, mongo_url, mongo, tmp_path) -> None:
    _own_binding(ycsb)
    mongo.ycsb.drop_collection("parity_secret")
    url = _credentialed(
        mongo_url, f"authMechanismProperties=X:{TOKEN}&tlsCertificateKeyFilePassword={TOKEN}2"
    )
    rc, out, err = _ycsb(ycsb, java_path, tmp_path, url, _run_props(table="parity_secret"))
    assert rc == 0 and "[INSERT], Return=OK, 20" in out, err[-2000:]  # authenticated and ran
    assert "mongo client connection created with mongodb://benchuser:***@" in out
    assert "authMechanismProperties=***&tlsCertificateKeyFilePassword=***" in out
    for text in (out, err):
        assert PASSWORD not in text and TOKEN not in text


@pytest.mark.integration
def test_no_secret_in_a_relayed_driver_error(ycsb, java_path, mongo_url, tmp_path) -> None:
    """The driver quotes a malformed authMechanismProperties value in its exception; the binding relays that
    message (stderr, and YCSB prints the DBException on both streams) with the value scrubbed."""
    _own_binding(ycsb)
    url = _credentialed(mongo_url, f"authMechanismProperties={TOKEN}")
    _rc, out, err = _ycsb(ycsb, java_path, tmp_path, url, _run_props())
    assert "ERROR: could not create the MongoDB client for 'mongodb://benchuser:***@" in err
    assert "'***' is not a key value pair" in err  # the driver's own words, with the value scrubbed
    for text in (out, err):
        assert PASSWORD not in text and TOKEN not in text


@pytest.mark.integration
def test_manifest_records_driver_settings(mongo_url: str, tmp_path: Path) -> None:
    """The suite switch reaches the binding, and the manifest records what the driver ran with, per step
    and once for the run."""
    overrides = [
        "mongodb.driver_defaults=driver",
        "recordcount=100",
        "operationcount=200",
        "mixes=read50_update50",
    ]
    outcome = run_bench(
        BenchOptions(
            suite=TINY, url=mongo_url, overrides=overrides, results=tmp_path, monitors=False, canaries=False
        ),
        log=lambda _m: None,
    )
    manifest = json.loads((outcome.run_dir / "manifest.json").read_text())
    if manifest["ycsb"]["binding_class"] != "ycsbrunner.binding.MongoDbClient":
        pytest.skip("YCSB_HOME selects the stock binding, which reports no driver settings")
    steps = [s for s in manifest["steps"] if s["phase"] in ("load", "run")]
    assert [s["status"] for s in steps] == ["completed", "completed"]
    for step in steps:
        assert step["properties"]["mongodb.driver_defaults"] == "driver"
        ds = step["driver_settings"]
        assert (ds["driver_defaults"], ds["retry_writes"], ds["max_connecting"]) == ("driver", True, 2)
    run_level = manifest["driver_settings"]
    assert run_level["retry_reads"] is True and run_level["varies_by_step"] == []
    assert "serverSelectionTimeoutMS" not in json.dumps(run_level)  # settings, not the URL
    assert "driver_settings" not in outcome.result.steps.columns

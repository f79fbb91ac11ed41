"""The canaries in the nightly verdict with real runs: eight normal "nights" of a scaled-down `quick` on the
embedded server (nights.py: the session's ``normal_nights``), continued in one copy by three nights with the
load generator throttled (every YCSB JVM this test starts, the canary's BasicDB probe among them, stopped
80 % of the time; the server untouched), and in the session's ``slow_server_nights`` (which the nightly
test judges too) by three nights with the server throttled the same way (the load generator untouched).

Judged as each night would be (``--until`` that night): on the load generator's nights regress never says
regression; from their second night it says it could not tell (exit 2) and names the load generator
(``--ignore-canaries`` judges the same nights as today's regress did); on the server's nights it flags a
regression (exit 1) from the second night, the canaries quiet.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from nights import (
    NORMAL_NIGHTS,
    SLOW_NIGHTS,
    THROTTLE,
    ahead_of_other_workers,
    copy_nights,
    night_values,
    run_night,
)
from throttle import Throttle
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.install.embedded import ServerInfo
from ycsb_runner.nightly.changepoint import RECOVERED
from ycsb_runner.runs.history import SqliteHistory

pytestmark = [pytest.mark.integration, pytest.mark.alone]  # nights compared by speed: no worker beside them
NORMAL = NORMAL_NIGHTS
CLIENT_NIGHTS = SERVER_NIGHTS = SLOW_NIGHTS  # (in two histories)
NIGHTS = NORMAL + len(SLOW_NIGHTS)  # in each
YCSB_MAIN = "site.ycsb.Client"


def ycsb_jvms() -> list[int]:
    """Every YCSB JVM this process has started (the steps' and the canary's)."""
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if YCSB_MAIN in p.cmdline():
                found.append(p.pid)
        except psutil.Error:
            pass
    return found


@pytest.fixture(scope="module")
def client_nights(
    normal_nights: Path, server: ServerInfo, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Path]:
    """The normal nights continued by three with the load generator throttled, as cpulimit would."""
    results = copy_nights(normal_nights, tmp_path_factory.mktemp("client-nights") / "results")
    with ahead_of_other_workers(server.pid):
        for night in CLIENT_NIGHTS:
            with Throttle(ycsb_jvms, **THROTTLE) as throttle:
                run_night(server.url, results, night, {"throttled": "client"})
            assert len(throttle.stopped) >= 3, throttle.stopped  # canaries, load, run
    yield results


@pytest.fixture(scope="module")
def server_nights(slow_server_nights: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This file's copy of the session's nights with the server throttled (nights.py)."""
    return copy_nights(slow_server_nights, tmp_path_factory.mktemp("server-nights") / "results")


def _judge(nights: Path, night: int, *extra: str) -> tuple[int, dict]:
    """regress's JSON on the morning after *night* (the runs that started before it ended)."""
    runs = SqliteHistory(nights / "history.sqlite").runs().set_index("run_id")
    until = str(runs.loc[f"night-{night}", "ended_at"])
    res = CliRunner().invoke(
        app, ["regress", "quick", "--results", str(nights), "--until", until, "-f", "json", *extra]
    )
    return res.exit_code, json.loads(res.stdout)


def _capacity(nights: Path) -> dict[str, float]:
    """Each night's load generator capacity (BasicDB ops/s, median of the two probes) from the history."""
    h = SqliteHistory(nights / "history.sqlite")
    m = h.metrics(h.runs()["run_id"].tolist())
    m = m[m["metric"] == "canary_ops_s"]
    return m.groupby("run_id")["value"].median().to_dict()


def _why(doc: dict) -> str:
    rows = [
        (r["phase"], r["operation"], r["metric"], r["verdict"], r["change_run"], r["note"])
        for r in doc["rows"]
    ]
    return f"{doc['decision']}\ncanaries: {doc['canaries']}\n" + "\n".join(map(str, rows))


def test_every_night_has_its_canaries(client_nights: Path, server_nights: Path) -> None:
    client, server = _capacity(client_nights), _capacity(server_nights)
    assert sorted(client) == sorted(server) == sorted(f"night-{i}" for i in range(NIGHTS))
    normal = sorted(client[f"night-{i}"] for i in range(NORMAL))
    assert normal == sorted(server[f"night-{i}"] for i in range(NORMAL))  # the same normal nights
    median = normal[len(normal) // 2]
    # the throttle stops the canary's JVM too: its nights are far below every normal night
    for i in CLIENT_NIGHTS:
        assert client[f"night-{i}"] < 0.5 * min(normal), (i, client)
    for i in SERVER_NIGHTS:  # BasicDB never reaches the server
        assert server[f"night-{i}"] > 0.5 * median, (i, server)


def _earlier(nights: Path, doc: dict, first: int) -> list[dict]:
    """The regressions that began before night *first* (the normal nights of a busy machine drift: in a run
    here, load throughput fell 20 % from night 4 with no canary moved), each checked from the history
    itself: its nights since are worse than the normal nights before it by what keeps a regression open."""
    earlier = [r for r in doc["rows"] if r["verdict"] == "regression" and _night(r["change_run"]) < first]
    for r in earlier:
        assert _worse(nights, r, first) >= RECOVERED * doc["min_effect_pct"], _why(doc)
    return earlier


def _night(run_id: str) -> int:
    return int(run_id.removeprefix("night-"))


def _worse(nights: Path, row: dict, first: int) -> float:
    """How much worse (%) the series' nights from its change to night *first* - 1 are than the nights before
    its change (medians, from the history's values: nights.night_values, which reads a latency
    distribution row on the quantile that moved most)."""
    by_night = night_values(nights, row)
    start = _night(row["change_run"])
    before = by_night[[f"night-{i}" for i in range(start)]].median()
    after = by_night[[f"night-{i}" for i in range(start, first)]].median()
    change = 100 * (after / before - 1)
    return -change if row["metric"] == "throughput_ops_s" else change


def _moved_since(doc: dict, row: dict) -> bool:
    """Whether a canary moved on the row's first night or later, as its environment note says."""
    start = _night(row["change_run"])
    return any(_night(m["run_id"]) >= start and m["run_id"] in row["note"] for m in doc["canaries"]["moved"])


def test_a_throttled_load_generator_is_the_environment(client_nights: Path) -> None:
    nights = client_nights
    client = {f"night-{i}" for i in CLIENT_NIGHTS}
    code, doc = _judge(nights, CLIENT_NIGHTS[0])  # one such night: nothing confirmed yet
    assert not [r for r in doc["rows"] if r["verdict"] == "regression" and r["change_run"] in client], _why(
        doc
    )
    today_flags = 0
    for night in CLIENT_NIGHTS[1:]:
        code, doc = _judge(nights, night)
        earlier = _earlier(nights, doc, CLIENT_NIGHTS[0])
        regressions = [r for r in doc["rows"] if r["verdict"] == "regression"]
        assert len(regressions) == len(earlier), _why(doc)  # none of the load generator's nights
        env = [r for r in doc["rows"] if r["verdict"] == "environment"]
        assert [r for r in env if r["change_run"] in client], _why(doc)
        for r in env:  # the load generator's nights name it; a normal night may have had a neighbour
            if r["change_run"] in client:
                assert "load generator" in r["note"], _why(doc)
            else:
                assert _night(r["change_run"]) < CLIENT_NIGHTS[0] and _moved_since(doc, r), _why(doc)
        assert code == (1 if earlier else 2) and "environment" in doc["decision"], _why(doc)
        assert "canary_ops_s" in {m["canary"] for m in doc["canaries"]["moved"]}, _why(doc)
        _, today = _judge(nights, night, "--ignore-canaries")  # what regress said before canaries
        assert not today["canaries"]["read"] and not [
            r for r in today["rows"] if r["verdict"] == "environment"
        ]
        today_flags += any(r["verdict"] == "regression" and r["change_run"] in client for r in today["rows"])
    # without the canaries the load generator's nights were a regression on at least one of these nights
    assert today_flags >= 1


def test_a_throttled_server_is_a_regression_from_its_second_night(server_nights: Path) -> None:
    # one night does not confirm a change, the second server night does, and no canary moved on them; a
    # change that began before them is one the normal nights really show (_earlier)
    nights = server_nights
    began = {f"night-{i}" for i in SERVER_NIGHTS}
    for night in SERVER_NIGHTS[1:]:
        code, doc = _judge(nights, night)
        earlier = _earlier(nights, doc, SERVER_NIGHTS[0])
        server = [r for r in doc["rows"] if r["verdict"] == "regression" and r["change_run"] in began]
        assert code == 1 and server, _why(doc)
        assert len(server) + len(earlier) == len([r for r in doc["rows"] if r["verdict"] == "regression"])
        assert not [r for r in doc["rows"] if r["verdict"] == "environment" and r["change_run"] in began]
        moved = {m["run_id"] for m in doc["canaries"]["moved"] if m["canary"] == "canary_ops_s"}
        assert not moved & began, _why(doc)

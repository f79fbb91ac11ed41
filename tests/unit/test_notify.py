"""``regress --notify``: a local HTTP server captures the webhooks over several nights of one history: one
message per (alert, event), a failing or silent webhook warned about (URL masked), retried the next night,
never changing the exit code."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ycsb_runner.cli import app
from ycsb_runner.nightly.notify import message, notify, notify_urls
from ycsb_runner.runs.alerts import Alert, alert_id
from ycsb_runner.runs.history import SqliteHistory
from ycsb_runner.safe.secrets import mask_webhook

sys.path.insert(0, str(Path(__file__).parent))
from test_ci_outputs import NOISE, history  # noqa: E402

SECRET = "T000/B111/s3cr3tTOKENxyz"


class Hook:
    """A local webhook: the JSON bodies it was sent; *status* its answer, *delay* how long it waits first."""

    def __init__(self) -> None:
        self.bodies: list[dict] = []
        self.status = 200
        self.delay = 0.0

    @property
    def events(self) -> list[tuple[str, str]]:
        return [(b["alert"]["alert_id"], b["alert"]["event"]) for b in self.bodies]


@contextmanager
def webhook() -> Iterator[tuple[Hook, str]]:
    hook = Hook()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers["Content-Length"]))
            time.sleep(hook.delay)
            if hook.status == 200:
                hook.bodies.append(json.loads(body))
            self.send_response(hook.status)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield hook, f"http://127.0.0.1:{server.server_address[1]}/services/{SECRET}?token=abc"
    finally:
        server.shutdown()
        server.server_close()


def _alert(change_run: str = "night-09", metric: str = "throughput_ops_s") -> Alert:
    series = {"phase": "run", "mix": "a", "threads": "4", "audit": "none", "operation": "OVERALL"}
    series["metric"] = metric
    key = tuple(series[k] for k in ("phase", "mix", "threads", "audit", "operation", "metric"))
    return Alert(
        alert_id("quick", key, change_run),
        "quick",
        series,
        "regression",
        -40.0,
        change_run,
        "night-10",
        "2026-11-11T02:15:00.000Z",
    )


def test_each_event_of_an_alert_is_posted_once_across_nights(tmp_path: Path) -> None:
    h = SqliteHistory(tmp_path / "history.sqlite")
    a = _alert()
    with webhook() as (hook, url):
        assert notify([url], "quick", history=h).sent == []  # no alert yet: nothing
        for _night in range(3):  # the alert is raised, then stays open for two more nights
            h.record_alerts([a])
            notify([url], "quick", history=h)
        assert hook.events == [(a.alert_id, "opened")]
        h.triage(a.alert_id, "acknowledged", "alice", "looking")
        for _night in range(2):
            notify([url], "quick", history=h)
        h.mark_recovered(a.alert_id, "night-14")
        for _night in range(2):
            notify([url], "quick", history=h)
    assert hook.events == [(a.alert_id, e) for e in ("opened", "acknowledged", "recovered")]
    first = hook.bodies[0]
    assert first["text"].startswith("ycsb-runner quick: run a t4 OVERALL throughput_ops_s regression -40.0 %")
    assert first["alert"]["suite"] == "quick" and first["alert"]["change_run"] == "night-09"
    assert h.notified() == {(a.alert_id, e) for e in ("opened", "acknowledged", "recovered")}


def test_a_failing_or_silent_webhook_is_warned_masked_and_retried_next_night(tmp_path: Path) -> None:
    h = SqliteHistory(tmp_path / "history.sqlite")
    a = _alert()
    h.record_alerts([a])
    with webhook() as (hook, url):
        hook.status = 500
        out = notify([url], "quick", history=h)
        assert out.sent == [] and out.failed == [(a.alert_id, "opened")] and len(out.warnings) == 1
        assert SECRET not in out.warnings[0] and "token=abc" not in out.warnings[0]
        assert mask_webhook(url) in out.warnings[0] and "/services/***?token=***" in out.warnings[0]
        hook.status, hook.delay = 200, 1.0  # answers, but later than the timeout
        out = notify([url], "quick", history=h, timeout=0.2)
        assert out.sent == [] and len(out.warnings) == 1 and h.notified() == set()
        hook.delay = 0.0  # the next night it works: the message comes, once
        assert notify([url], "quick", history=h).sent == [(a.alert_id, "opened")]
        assert notify([url], "quick", history=h).sent == []
    assert [e for _, e in hook.events if e == "opened"] in (["opened"], ["opened", "opened"])
    assert hook.events[-1] == (a.alert_id, "opened") and len(h.notified()) == 1


def test_urls_come_from_the_option_and_the_environment_and_must_be_http() -> None:
    env = {"YCSB_RUNNER_NOTIFY": "https://a.example/x, https://b.example/y  https://a.example/x"}
    assert notify_urls(["https://c.example/z"], env) == [
        "https://c.example/z",
        "https://a.example/x",
        "https://b.example/y",
    ]
    from ycsb_runner.errors import UserError

    with pytest.raises(UserError, match=r"ftp://\*\*\*@h/p/\*\*\*"):
        notify_urls(["ftp://user:pw@h/p/secret"], {})
    assert (
        mask_webhook("https://u:p@hooks.slack.com/services/T/B/X?x=1")
        == "https://***@hooks.slack.com/services/***?x=***"
    )
    assert mask_webhook("https://example.com/hook") == "https://example.com/hook"


def test_regress_notify_keeps_the_exit_code_and_no_file_holds_the_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = history(tmp_path / "results", [*NOISE, 0.6, 0.6])
    h = SqliteHistory(results / "history.sqlite")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(results / "summary.md"))
    base = ["regress", "quick", "--results", str(results), "--report", str(results / "rep")]
    with webhook() as (hook, url):
        hook.status = 503
        monkeypatch.setenv("YCSB_RUNNER_NOTIFY", url)  # the secret never on the command line
        down = CliRunner().invoke(app, [*base, "--junit", str(results / "junit.xml")])
        assert down.exit_code == 1 and "warning: the webhook" in down.stderr and SECRET not in down.output
        hook.status = 200
        up = CliRunner().invoke(app, base)
        assert up.exit_code == 1 and "notified: 2 alert event(s) to 1 webhook(s)" in up.stderr
        again = CliRunner().invoke(app, base)
        assert again.exit_code == 1 and "notified" not in again.stderr
    assert len(hook.bodies) == 2  # regress raised an alert per regressed series; each announced once
    assert {b["alert"]["alert_id"] for b in hook.bodies} == {a.alert_id for a in h.alerts("quick")}
    assert {b["alert"]["series"]["metric"] for b in hook.bodies} == {"throughput_ops_s", "avg_us"}
    body = hook.bodies[0]["alert"]
    assert body["report"].endswith("regress.html") and body["nights"] and "night-10" in body["run_ids"]
    assert body["change_tags"] == "night=9"
    for f in results.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f


def test_the_message_escapes_nothing_and_carries_the_alert() -> None:
    a = _alert()
    m = message(a, "opened")
    assert (
        json.loads(json.dumps(m)) == m
        and m["alert"]["alert_id"] == a.alert_id
        and m["alert"]["event"] == "opened"
    )

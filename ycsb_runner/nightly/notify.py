"""Notifications on change, not every night (``regress --notify URL``, ``$YCSB_RUNNER_NOTIFY``).

Each alert of the history (``runs/alerts.py``) is announced once per event: ``opened`` when it is raised,
its triage state when someone sets one (``acknowledged``, ..., ``accepted``), ``recovered`` when its series
comes back. The history remembers what was sent (``History.notified``/``record_notified``), so the same
(alert, event) is never posted twice, whatever the nights in between. Each message is one JSON POST:
a Slack-compatible ``text`` line and the structured ``alert`` (suite, series, change, nights, canaries, run
ids, tags, report path). A webhook that fails or does not answer within 5 s is one warning naming the masked
URL (``secrets.mask_webhook``); that event is not recorded as sent, so it is posted again on the next night;
the decision and the exit code never depend on a webhook.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ycsb_runner import config
from ycsb_runner.errors import UserError
from ycsb_runner.safe.secrets import mask_webhook

if TYPE_CHECKING:
    from ycsb_runner.nightly.regress import RegressResult
    from ycsb_runner.runs.alerts import Alert
    from ycsb_runner.runs.history import History

TIMEOUT_S = 5.0
OPENED, RECOVERED = "opened", "recovered"

Post = Callable[[str, bytes, float], None]  # (url, body, timeout): raises on failure


def notify_urls(given: Iterable[str] | None = None, env: dict[str, str] | None = None) -> list[str]:
    """The webhook URLs: those given (``--notify``) and those of ``$YCSB_RUNNER_NOTIFY`` (separated by
    spaces or commas), each once; UserError (naming it masked) for one that is not http(s)."""
    text = (config.current() if env is None else config.Config.from_env(env)).notify
    urls = [*(given or []), *(u for u in re.split(r"[\s,]+", text) if u)]
    for url in urls:
        if not url.startswith(("http://", "https://")):
            raise UserError(f"--notify {mask_webhook(url)}: expected an http:// or https:// webhook URL")
    return list(dict.fromkeys(urls))


def events(alert: Alert) -> list[str]:
    """The events of *alert* to announce, in order: opened, its triage state (if any), recovered."""
    from ycsb_runner.runs.alerts import UNTRIAGED

    out = [OPENED]
    if alert.status != UNTRIAGED:
        out.append(alert.status)
    if alert.recovered_run:
        out.append(RECOVERED)
    return out


def pending(alerts: Iterable[Alert], sent: set[tuple[str, str]]) -> list[tuple[Alert, str]]:
    """(alert, event) of every event not announced yet."""
    return [(a, e) for a in alerts for e in events(a) if (a.alert_id, e) not in sent]


def _series_text(alert: Alert) -> str:
    s = alert.series
    return f"{s.get('phase')} {s.get('mix')} t{s.get('threads')} {s.get('operation')} {s.get('metric')}"


def message(
    alert: Alert, event: str, result: RegressResult | None = None, report: str | None = None
) -> dict[str, Any]:
    """The JSON message of *event* of *alert*: ``text`` (one line, Slack-compatible) and ``alert`` (the
    alert's record, plus from *result*: the series' nights and tags, the canaries' notes, the newest run)."""
    change = f" {alert.change_pct:+.1f} %" if alert.change_pct is not None else ""
    what = {
        OPENED: f"{alert.direction}{change} since {alert.change_run}",
        RECOVERED: f"recovered at {alert.recovered_run}",
    }.get(event, f"{event} by {alert.status_by or '?'}" + (f": {alert.why}" if alert.why else ""))
    text = f"ycsb-runner {alert.suite}: {_series_text(alert)} {what} [{alert.alert_id}]"
    detail: dict[str, Any] = {**alert.record(), "event": event, "report": report}
    if result is not None:
        row = _row_of(alert, result)
        detail |= {
            "nights": _plain(row.get("nights")) if row else None,
            "change_tags": row.get("change_tags") if row else None,
            "canaries": list(result.canary_lines),
            "newest_run": result.newest,
            "run_ids": list(result.runs_used),
        }
    return {"text": text, "alert": detail}


def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") and not isinstance(v, str) else v


def _row_of(alert: Alert, result: RegressResult) -> dict[str, Any] | None:
    from ycsb_runner.runs.history import SERIES_KEYS, series_id

    for row in result.table.to_dict("records"):
        if series_id(row[k] for k in SERIES_KEYS) == alert.series_key:
            return row
    return None


def post_json(url: str, body: bytes, timeout: float) -> None:
    """POST *body* (JSON) to *url*; raises on a failure, a non-2xx answer or no answer within *timeout*."""
    req = urllib.request.Request(
        url, data=body, method="POST", headers={"Content-Type": "application/json; charset=utf-8"}
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - http(s) only (notify_urls)
        if not 200 <= resp.status < 300:
            raise OSError(f"HTTP {resp.status}")


@dataclass
class NotifyOutcome:
    """What ``notify`` did: *sent* (alert_id, event) announced to every URL, *failed* those retried on the
    next night, *warnings* (one per failing URL, the URL masked)."""

    sent: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def notify(
    urls: list[str] | None = None,
    suite: str | None = None,
    *,
    history: History | None = None,
    results: Path | None = None,
    history_url: str | None = None,
    result: RegressResult | None = None,
    report: str | None = None,
    post: Post = post_json,
    timeout: float = TIMEOUT_S,
) -> NotifyOutcome:
    """Post every event of *suite*'s alerts (all suites': None) not announced yet to each of *urls*
    (None: ``$YCSB_RUNNER_NOTIFY``'s), and remember in the history (*history*, else the one *results* or
    *history_url* names) those every URL took. A URL that fails is warned about once (masked) and not tried
    again this time; its events stay unsent, so the next call posts them again. *result*: the regress
    that judged the nights (its nights, tags and canaries go into the messages); *report*: its report."""
    out = NotifyOutcome()
    urls = notify_urls() if urls is None else notify_urls(urls, env={})
    if not urls:
        return out
    if history is None:
        from ycsb_runner.runs.history import open_history

        history = open_history(results, history_url)
    todo = pending(history.alerts(suite), history.notified())
    broken: set[str] = set()
    for alert, event in todo:
        body = json.dumps(message(alert, event, result, report), ensure_ascii=False).encode()
        ok = True
        for url in urls:
            if url in broken:
                ok = False
                continue
            try:
                post(url, body, timeout)
            except Exception as err:  # noqa: BLE001 - any failure of a webhook is a warning, never the decision
                broken.add(url)
                ok = False
                out.warnings.append(
                    f"warning: the webhook {mask_webhook(url)} failed ({_why(err, url)}): its messages are "
                    "sent again on the next run"
                )
        if ok:
            history.record_notified(alert.alert_id, event, _now())
            out.sent.append((alert.alert_id, event))
        else:
            out.failed.append((alert.alert_id, event))
    return out


def _why(err: BaseException, url: str) -> str:
    """The error in one line, without the URL (its secret)."""
    text = " ".join(str(getattr(err, "reason", None) or err).split())[:120] or type(err).__name__
    return text.replace(url, mask_webhook(url))


def _now() -> str:
    from ycsb_runner.runs.model import iso_utc

    return str(iso_utc(time.time()))

"""bench/realseries_bench.py's pure parts: the transcribed Perfherder sample, how alarms are scored against
the alerts' ranges, and the comparison at equal false alarms read off the two detectors' curves."""

from __future__ import annotations

import re

import numpy as np
import pytest

from tests.unit.bench_scripts import bench_script

rs = bench_script("realseries_bench")


def test_the_sample_holds_what_its_readme_says() -> None:
    series = rs.load()
    labels = [lab for s in series for lab in s.labels]
    real = [lab for lab in labels if lab.real]
    invalid = [lab for lab in labels if not lab.real]
    assert (len(series), sum(s.values.size for s in series)) == (28, 2387)
    assert (len(real), sum(lab.regression for lab in real)) == (34, 23)
    assert (len(invalid), sum(lab.regression for lab in invalid)) == (7, 6)
    for s in series:
        assert s.values.size <= 140, s.id  # E-Divisive's memory grows with the square of the length
        assert np.all(s.values > 0), s.id
        assert s.lower_is_better
        for lab in s.labels:
            assert rs.FIRST_JUDGED <= lab.first <= lab.index < s.values.size, (s.id, lab)


def test_every_label_names_the_alerts_revision_and_summary() -> None:
    rows = (rs.DATA / "labels.csv").read_text().splitlines()[1:]
    assert len(rows) == 41
    for row in rows:
        series, index, first, status, direction, pct, revision, summary = row.split(",")
        assert re.fullmatch(r"[0-9a-f]{40}", revision), row
        assert status in ("TP", "FP") and direction in ("regression", "improvement"), row
        # lower is better everywhere: a regression went up
        assert (float(pct) > 0) == (direction == "regression"), row
        assert int(first) <= int(index) and summary.isdigit(), row


def _series(labels: tuple, n: int = 60) -> object:
    return rs.Series("s", "page metric (warm)", np.full(n, 100.0), True, labels)


ANY, REGRESSIONS = rs.MODES


def test_an_alarm_anywhere_in_the_alerts_range_or_two_points_after_it_catches_the_change() -> None:
    # a real regression alerted on 40 whose previous push was point 34: points 35..39 were backfilled
    change = rs.Label(index=40, real=True, regression=True, first=35)
    s = [_series((change,))]
    for t in (35, 38, 40, 42):
        assert rs.score(s, [[(t, rs.WORSE)]], REGRESSIONS).caught == 1, t
    for t in (34, 43):
        sc = rs.score(s, [[(t, rs.WORSE)]], REGRESSIONS)
        assert (sc.caught, sc.false_alarms) == (0, 1), t


def test_alarms_on_an_invalid_alert_are_false_alarms_counted_at_invalid() -> None:
    s = [_series((rs.Label(20, False, True, 20), rs.Label(40, True, True, 40)))]
    sc = rs.score(s, [[(21, rs.WORSE), (41, rs.WORSE), (50, rs.WORSE)]], REGRESSIONS)
    assert (sc.caught, sc.labels, sc.false_alarms, sc.at_invalid, sc.judged) == (1, 1, 2, 1, 50)
    # an improvement alarm counts toward "any change" only
    assert rs.score(s, [[(40, rs.BETTER)]], REGRESSIONS).caught == 0
    assert rs.score(s, [[(40, rs.BETTER)]], ANY).caught == 1


def test_equal_false_alarms_names_the_labels_otava_catches_and_ycsb_runner_misses(
    capsys: pytest.CaptureFixture[str],
) -> None:
    labels = tuple(rs.Label(i, True, True, i) for i in (20, 40, 60, 80))
    s = [_series(labels, n=110)]  # 100 points judged: false alarms per 100 points = their count
    ours = {
        0.01: [[(20, rs.WORSE), (30, rs.WORSE)]],
        0.05: [[(20, rs.WORSE), (40, rs.WORSE), (30, rs.WORSE), (50, rs.WORSE), (90, rs.WORSE)]],
    }
    # Otava: 3 of 4 at 2 false alarms, where ycsb-runner's curve (1, 25 %) .. (3, 50 %) reads 37.5 %
    otava = {0.001: [[(20, rs.WORSE), (40, rs.WORSE), (60, rs.WORSE), (30, rs.WORSE), (50, rs.WORSE)]]}
    rs.print_curves(s, ours, otava, REGRESSIONS)
    out = capsys.readouterr().out
    assert "ycsb-runner at 2.00:  37.5" in out
    assert "at least Otava's at 0 of Otava's 1 points" in out and "below at 1" in out
    assert "75.0 % against 37.5 % (37.5 points)" in out
    assert "ycsb-runner at alpha 0.01 (1.00) misses: s:40 s:60" in out

"""Change points and nightly verdicts over a run history (pure; numpy/scipy only).

``e_divisive`` is E-Divisive means (Matteson & James 2014, the method of MongoDB's performance CI,
Daly et al. ICPE 2020) with distance exponent 1: the split of a segment that maximises the divergence
of the two parts is kept when a permutation test says it beats what shuffled data reach, and the
parts are split again. Its change points mark where the last stable segment begins.

``judge_series`` turns one series (one value per night, oldest first) into a verdict about the newest
nights: the last k nights (k from *confirm* to *window*) against the stable segment before them, on log
values. The statistic of k nights is the least changed of them, in units of the segment's standard
deviation (the segment's outliers beyond 3.5 scaled MADs dropped, at most a tenth of its nights): a change
must show on every one of the k nights, so one outlier night moves nothing once k >= 2, while a real step
shows on all of them. The statistic is pivotal for Gaussian noise (it does not depend on the level or the
spread), so its null distribution, and that of the smallest p over the k tried, are simulated once per
segment length: the p-value is exact for Gaussian nightly noise and accounts for trying several k and
both directions.

``analyse.stats.adjust`` corrects the p-values of many series at once (Holm or Benjamini-Hochberg).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from ycsb_runner.nightly.regress_options import DEFAULT_PERMUTATIONS
from ycsb_runner.nightly.window import (
    DEFAULT_SEED,
    RECOVERED,
    NoiseModel,
    SpreadAt,
    SuiteNoise,
    SuiteView,
    Window,
    detectable_pct,
    lag1_rho,
    noise_model,
    pct_change,
    spread_floor,
    window_test,
)

MIN_BASELINE = 3  # nights in a stable segment before the newest can be tested against it
MAX_BASELINE = 60  # the newest nights of a longer stable segment are the baseline
OWN_CHANGE_NIGHTS = 3  # a change point this few nights before a regression's first night is its own


_CHUNK_BYTES = 2 * 2**20  # the pairwise distances of one chunk of permuted series (a site: under 200 MB)


# values near the float limit (a damaged history: 1.7e308) overflow their distances to inf: q is then inf or
# nan (never the best split), without numpy's warning lines on the user's terminal
@np.errstate(over="ignore", invalid="ignore")
def _q_stats(z: np.ndarray, min_size: int) -> np.ndarray:
    """E-Divisive q for every split tau of each row of *z* (shape (r, n)); -inf where a part is too small.

    The rows are taken in chunks so that their pairwise distances stay under _CHUNK_BYTES."""
    r, n = z.shape
    q = np.full((r, n + 1), -np.inf)
    if n < 2 * min_size:
        return q
    chunk = max(1, _CHUNK_BYTES // (8 * n * n))
    taus = np.arange(min_size, n - min_size + 1)
    m = n - taus
    lower = np.tri(n, k=-1)  # [j, i]: 1 where i < j
    for lo in range(0, r, chunk):
        part = z[lo : lo + chunk]
        d = np.abs(part[:, :, None] - part[:, None, :])
        before = np.einsum("rji,ji->rj", d, lower)  # per j: distances to the earlier values
        after = d.sum(axis=2) - before  # ... to the later ones
        within_x = 2 * np.cumsum(before, axis=1)[:, taus - 1]  # both orders, values < tau
        within_y = 2 * np.cumsum(after[:, ::-1], axis=1)[:, ::-1][:, taus]  # values >= tau
        total = 2 * before.sum(axis=1, keepdims=True)
        cross = (total - within_x - within_y) / 2  # one order: X row, Y column
        mean_x = np.where(taus > 1, within_x / np.maximum(taus * (taus - 1), 1), 0.0)
        mean_y = np.where(m > 1, within_y / np.maximum(m * (m - 1), 1), 0.0)
        q[lo : lo + chunk, taus] = (taus * m / n) * (2 * cross / (taus * m) - mean_x - mean_y)
    return q


def _best(z: np.ndarray, min_size: int) -> tuple[int, float]:
    q = _q_stats(z[None, :], min_size)[0]
    tau = int(np.argmax(q))
    return tau, float(q[tau])


def _permutation_p(
    segments: list[np.ndarray], observed: float, min_size: int, permutations: int, alpha: float, seed: int
) -> float:
    """P of the best q over all *segments* reaching *observed* when each segment's values are shuffled
    within it. Stops early once the p-value cannot fall below *alpha* (the decision is the same)."""
    rng = np.random.default_rng(seed + sum(s.size for s in segments))
    hits, done = 0, 0
    stop = int(alpha * (permutations + 1))  # hits at which p >= alpha whatever follows
    batch = 32
    while done < permutations:
        b = min(batch, permutations - done)
        best = np.full(b, -np.inf)
        for seg in segments:
            if seg.size >= 2 * min_size:
                shuffled = seg[np.argsort(rng.random((b, seg.size)), axis=1)]
                best = np.maximum(best, _q_stats(shuffled, min_size).max(axis=1))
        hits += int(np.sum(best >= observed - 1e-12 * abs(observed)))
        done += b
        if hits >= stop > 0:
            break
        batch = min(4 * batch, 512)
    return (1 + hits) / (1 + done)


def e_divisive(
    values: np.ndarray | list[float],
    *,
    alpha: float = 0.05,
    min_size: int = 2,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
) -> list[tuple[int, float]]:
    """Change points of *values* as (index where the new segment starts, permutation p), sorted.

    As in MongoDB's implementation and Otava: each round takes the best split over *all* current segments
    and tests it against one permutation null (each segment shuffled within itself, the best q over all of
    them); the series stops splitting at the first split that is not significant at *alpha*."""
    x = np.asarray(values, dtype=float)
    bounds = [0, x.size]
    found: list[tuple[int, float]] = []
    while True:
        segments = [x[lo:hi] for lo, hi in zip(bounds, bounds[1:], strict=False)]
        best_q, best_cp = -np.inf, -1
        for lo, seg in zip(bounds, segments, strict=False):
            if seg.size >= 2 * min_size:
                tau, q = _best(seg, min_size)
                if q > best_q:
                    best_q, best_cp = q, lo + tau
        if best_cp < 0:
            break
        p = _permutation_p(segments, best_q, min_size, permutations, alpha, seed + len(found))
        if p >= alpha:
            break
        found.append((best_cp, p))
        bounds = sorted([*bounds, best_cp])
    return sorted(found)


@dataclass(frozen=True)
class SeriesJudgement:
    """What one series says about the newest night(s); ``tested`` False when it could not say."""

    tested: bool
    test: str
    p_value: float
    before_median: float
    after_median: float
    change_pct: float
    change_index: int  # the night where the change began (index into the series), -1 when untested
    change_points: tuple[int, ...]
    note: str = ""
    open: bool = False  # a regression found on an earlier night that has not recovered
    baseline: tuple[int, int] = (-1, -1)  # the nights [start, end) the window was judged against
    window_nights: int = 0
    noise: NoiseModel | None = None
    detectable_pct: float = math.nan  # the smallest change a full window could show at p < alpha


def _untested(note: str, cps: tuple[int, ...] = ()) -> SeriesJudgement:
    nan = math.nan
    return SeriesJudgement(False, "none", nan, nan, nan, nan, -1, cps, note)


def _baseline_length(m: int) -> int:
    """Baselines longer than 10 nights are cut to a multiple of 5 (of 10 beyond 30; at most MAX_BASELINE):
    fewer null distributions to simulate."""
    if m <= 10:
        return m
    return min(MAX_BASELINE, 5 * (m // 5) if m <= 30 else 10 * (m // 10))


@dataclass(frozen=True)
class _At:
    """The window test as it would have run on night end - 1."""

    p: float
    win: Window | None
    start: int
    stop: int  # the baseline is [start, stop)
    ks: tuple[int, ...]
    model: NoiseModel


def _span(
    cps: tuple[int, ...], end: int, window: int, confirm: int
) -> tuple[int, int, tuple[int, ...]] | None:
    """The baseline [start, stop) and the windows tried of the test of the nights before *end*: from the
    last change point before the longest window, except one within OWN_CHANGE_NIGHTS before it, which is
    the window's own change placed early by E-Divisive (it left too few nights to test)."""
    older = [c for c in cps if c < end - window - OWN_CHANGE_NIGHTS]
    start = older[-1] if older else 0
    ks = tuple(k for k in range(confirm, window + 1) if end - k - start >= MIN_BASELINE)
    if not ks:
        return None
    stop = end - max(ks)
    return stop - _baseline_length(stop - start), stop, ks


SuiteAt = Callable[[int], SuiteNoise | None]  # the suite's noise over the nights before a night (an index)


def _judge_at(
    y: np.ndarray,
    cps: tuple[int, ...],
    end: int,
    window: int,
    confirm: int,
    min_effect_pct: float,
    suite: SuiteAt | None = None,
    spread: SpreadAt | None = None,
) -> _At | None:
    """The newest nights before *end* against the stable segment before them (None: too little of it), as
    the test would have run on night end - 1. The noise model's correlation comes from every night before
    the window, around one mean: a wandering level or a slow drift shows as correlation (a cautious null),
    and nothing after the night judged is looked at; with *suite*, shrunk toward the suite's estimate over
    the same nights (``window.SuiteNoise``); with *spread*, the baseline's spread is at least that of the
    series over those nights, shrunk toward that of its metric in the suite (``window.SpreadPrior``)."""
    span = _span(cps, end, window, confirm)
    if span is None:
        return None
    start, stop, ks = span
    pre = y[: end - window]
    rho = lag1_rho(np.log(pre) if np.all(pre > 0) else pre, suite(end - window) if suite else None)
    floor = spread_floor(y[start:stop], spread(end - window) if spread else None)
    model = noise_model(y[start:stop], floor)
    p, win = window_test(y[start:stop], y[stop:end], ks, min_effect_pct, rho, floor)
    return _At(p, win, start, stop, ks, NoiseModel(model.nights, model.level, model.spread, rho))


def _open_regression(
    y: np.ndarray,
    cps: tuple[int, ...],
    *,
    window: int,
    confirm: int,
    min_effect_pct: float,
    alpha: float,
    worse: int,
    then_cps: Callable[[int], tuple[int, ...]],
    suite: SuiteAt | None = None,
    spread: SpreadAt | None = None,
) -> tuple[int, _At] | None:
    """The earliest change toward worse, begun before tonight's window, that the window test flagged when
    its nights were the newest and that has not recovered since: on no night after the flag were the
    newest *window* nights back within RECOVERED of *min_effect_pct* % of the nights before it. A recovery
    closes the regression for good (a later drop is a new one, for the window test to find): one that
    hovers near the threshold is one alarm, not a new alarm each time it crosses it, while a sustained
    step's nights rarely come back that far. Its baseline is the segment before it as tonight's change points
    cut it (``_span``: not at its own change placed a few nights early) or, failing that, as the change points
    of the night that raised the flag cut it: a flag once raised stands, whatever change points later nights
    find. (Measured in bench/detection_bench.py, 150 series: with RECOVERED 0.5 and every change point
    cutting, 10 % steps stayed flagged on 93.6 % (iid) and 93.7 % (AR(1) 0.5) of the nights after their
    alarm; with RECOVERED 0.25 and OWN_CHANGE_NIGHTS on 100.0 % and 98.0 %; with the flag's own change
    points too on 100.0 % and 98.8 % (the rest: one series whose nights came back to the old level), and
    alarms without a change 0.27-1.00 per 100 nights where they were 0.27-1.06.) (night where it began, the
    test then)"""
    n = y.size
    # per night u >= window - 1: the median of the window of nights ending at u
    medians = np.median(np.lib.stride_tricks.sliding_window_view(y, window), axis=1)
    # every night may be where it began: trying only the nights next to tonight's change points made an
    # open regression come and go with them (each return a new alarm under drift in detection_bench.py)
    for s in range(MIN_BASELINE, n - window):
        before_s = tuple(cp for cp in cps if cp < s)
        span = _span(before_s, s + window, window, confirm)
        if (
            span is None
            or not any(  # the test's window k would be too small a change or has recovered
                _stays_worse(y, medians[s + 1 :], span[0], s + window, k, worse, min_effect_pct)
                for k in span[2]
            )
        ):
            continue  # (cheap: most nights are not the start of anything)
        since = medians[s + 1 :]  # the windows ending on the nights after the flag (s + window - 1)
        args = (y, s + window, since, window, confirm, min_effect_pct, alpha, worse, suite, spread)
        # as tonight's change points cut the history, else as that night's did (what it printed then)
        at = _flag(before_s, *args) or _flag(then_cps(s + window), *args)
        if at is not None and at.win is not None:
            return s + window - at.win.k, at  # the first night of the window flagged
    return None


def _flag(
    cps: tuple[int, ...],
    y: np.ndarray,
    end: int,
    since: np.ndarray,
    window: int,
    confirm: int,
    min_effect_pct: float,
    alpha: float,
    worse: int,
    suite: SuiteAt | None = None,
    spread: SpreadAt | None = None,
) -> _At | None:
    """The window test of the nights before *end* with the history cut at *cps*, when it flagged a change
    toward worse that the windows *since* have not recovered from."""
    at = _judge_at(y, cps, end, window, confirm, min_effect_pct, suite, spread)
    if at is None or at.win is None or at.p >= alpha or worse * at.win.pct < min_effect_pct:
        return None
    return at if np.all(worse * pct_change(at.win.before, since) >= RECOVERED * min_effect_pct) else None


def _stays_worse(
    y: np.ndarray, since: np.ndarray, start: int, end: int, k: int, worse: int, min_effect_pct: float
) -> bool:
    """Whether the window of the k nights before *end* is *min_effect_pct* % worse than the nights from
    *start* before it, and the windows *since* have not come back within RECOVERED of it."""
    before = float(np.median(y[start : end - k]))
    return bool(
        worse * pct_change(before, float(np.median(y[end - k : end]))) >= min_effect_pct
        and np.all(worse * pct_change(before, since) >= RECOVERED * min_effect_pct)
    )


def _open_judgement(
    y: np.ndarray, off: int, shown: tuple[int, ...], window: int, alpha: float, s: int, at: _At
) -> SeriesJudgement:
    """The judgement of a series whose regression began at night *s* and is still open."""
    assert at.win is not None
    n = y.size
    after = float(np.median(y[n - window :]))
    return SeriesJudgement(
        True,
        f"open since night {off + s + 1}",
        at.p,
        at.win.before,
        after,
        pct_change(at.win.before, after),
        off + s,
        shown,
        f"flagged on night {off + s + at.win.k} ({at.win.pct:+.1f} %), not recovered",
        open=True,
        baseline=(off + at.start, off + at.stop),
        window_nights=at.win.k,
        noise=at.model,
        detectable_pct=detectable_pct(at.model, at.ks, alpha),
    )


def _tonight(
    y: np.ndarray,
    off: int,
    cps: tuple[int, ...],
    shown: tuple[int, ...],
    window: int,
    confirm: int,
    min_effect_pct: float,
    alpha: float,
    suite: SuiteAt | None = None,
    spread: SpreadAt | None = None,
) -> SeriesJudgement:
    """The judgement of tonight's window of a series with no open regression."""
    n = y.size
    at = _judge_at(y, cps, n, window, confirm, min_effect_pct, suite, spread)
    if at is None:
        start = [c for c in cps if c < n - window][-1]
        return _untested(
            f"only {n - confirm - start} nights since the change at night {off + start + 1}: "
            f"need {MIN_BASELINE}",
            shown,
        )
    common = {
        "baseline": (off + at.start, off + at.stop),
        "noise": at.model,
        "detectable_pct": detectable_pct(at.model, at.ks, alpha),
    }
    if at.win is None:
        b = float(np.median(y[at.start : at.stop]))
        a = float(np.median(y[n - min(at.ks) :]))
        return SeriesJudgement(
            True,
            f"last {min(at.ks)}+ nights",
            1.0,
            b,
            a,
            pct_change(b, a),
            off + n - min(at.ks),
            shown,
            f"no window of the last {max(at.ks)} nights moved {min_effect_pct:g} %",
            window_nights=max(at.ks),
            **common,
        )
    # the change began with the window, or earlier at a change point inside the longest window tried
    began = min([n - at.win.k, *(c for c in cps if n - max(at.ks) <= c < n - at.win.k)])
    return SeriesJudgement(
        True,
        f"last {at.win.k} nights" if at.win.k > 1 else "last night",
        at.p,
        at.win.before,
        at.win.after,
        at.win.pct,
        off + began,
        shown,
        window_nights=at.win.k,
        **common,
    )


@np.errstate(over="ignore", invalid="ignore", divide="ignore")  # values near 1.7e308: see _q_stats
def judge_series(
    values: np.ndarray | list[float],
    *,
    window: int = 3,
    confirm: int = 2,
    min_effect_pct: float = 0.0,
    alpha: float = 0.01,
    worse: int = 0,
    accepted_from: int = 0,
    cp_alpha: float = 0.01,
    permutations: int = DEFAULT_PERMUTATIONS,
    seed: int = DEFAULT_SEED,
    suite: SuiteAt | SuiteView | None = None,
) -> SeriesJudgement:
    """The newest night(s) of one series (one value per night, oldest first) against their history.

    Tonight: the last k nights, for k from *confirm* to *window*, are tested against the stable segment
    before them (from the last E-Divisive change point older than the window, at most MAX_BASELINE
    nights); a window counts only if its median is at least *min_effect_pct* % off the segment's. *confirm*
    1 lets tonight alone be a change; 2 (the default) needs two nights, so a single outlier night flags
    nothing.

    Earlier nights: with *worse* (-1: a drop is worse, 1: a rise is), a change toward worse that the same
    test flagged at p < *alpha* when its nights were the newest stays an open regression (``open``) while
    the newest nights are still *min_effect_pct* % worse than the nights before it: a regression that
    lasts longer than the window is not absorbed into the baseline. *accepted_from*: the night from which
    a user accepted the values as the new normal (``regress accept``): nothing before it is looked at.

    *suite*: the noise the series of its suite share over the nights before a night (given the index of
    that night in *values*; ``window.suite_noise``): the correlation of the null is the series' own estimate
    shrunk toward the suite's. A ``window.SuiteView`` with a night effect also removes what each night did to
    the whole suite (``window.night_effect``: the host's share of the noise, common to its series) before
    the test, and shrinks toward the suite's noise without it; unless the night effect itself moved by
    *min_effect_pct* % toward worse over the window (most of the suite changed: one event, which removing
    it would hide), when the series' own values are judged too and their verdict stands if it is a
    regression (``_with_night_effect``).
    """
    kw = {
        "window": window,
        "confirm": confirm,
        "min_effect_pct": min_effect_pct,
        "alpha": alpha,
        "worse": worse,
        "accepted_from": accepted_from,
        "cp_alpha": cp_alpha,
        "permutations": permutations,
        "seed": seed,
    }
    if isinstance(suite, SuiteView):
        if suite.effect is not None:
            return _with_night_effect(np.asarray(values, dtype=float), suite, **kw)
        return _judge_values(np.asarray(values, dtype=float), suite=suite.noise, spread=suite.spread, **kw)
    return _judge_values(np.asarray(values, dtype=float), suite=suite, **kw)


def _with_night_effect(x: np.ndarray, view: SuiteView, **kw) -> SeriesJudgement:
    """The judgement of *x* without the suite's night effect when it is a regression, else of *x* itself
    (what the series alone can tell: "could not tell" stays so when the suite's noise is too large to
    see a change of the whole suite), except that a regression of *x* alone stands only when the night
    effect moved toward worse over the window (the whole suite changed)."""
    assert view.effect is not None
    effect = np.nan_to_num(view.effect, nan=0.0)
    alpha, min_effect, worse = kw["alpha"], kw["min_effect_pct"], kw["worse"]
    without = _judge_values(x * np.exp(-effect), suite=view.residual, spread=view.residual_spread, **kw)
    if _regressed(without, alpha, min_effect, worse):
        note = "; ".join(n for n in (without.note, "the suite's night effect removed") if n)
        return replace(without, note=note)
    own = _judge_values(x, suite=view.noise, spread=view.spread, **kw)
    if not _regressed(own, alpha, min_effect, worse):
        return own
    off = max(0, int(kw["accepted_from"]))
    moved = _suite_moved(effect[off:], own.change_index - off, own.window_nights, min_effect, worse)
    return own if moved else without


def _suite_moved(effect: np.ndarray, began: int, nights: int, min_effect_pct: float, worse: int) -> bool:
    """Whether the night effect of the *nights* nights from *began* (a regression's window: on the night
    that raised it, so that an open regression does not come and go with tonight's host) is
    *min_effect_pct* % toward worse (either way when *worse* is 0) from that of the nights before them."""
    if began < 1:
        return True
    after = effect[began : began + max(1, nights)]
    pct = 100.0 * math.expm1(float(np.median(after) - np.median(effect[:began][-MAX_BASELINE:])))
    return worse * pct >= min_effect_pct if worse else abs(pct) >= min_effect_pct


def _regressed(j: SeriesJudgement, alpha: float, min_effect_pct: float, worse: int) -> bool:
    """Whether *j* flags a change toward worse (either way when *worse* is 0) of min_effect_pct % or more."""
    if not j.tested:
        return False
    size = worse * j.change_pct if worse else abs(j.change_pct)
    return j.open or (j.p_value < alpha and size >= min_effect_pct)


def _judge_values(
    x: np.ndarray,
    *,
    window: int,
    confirm: int,
    min_effect_pct: float,
    alpha: float,
    worse: int,
    accepted_from: int,
    cp_alpha: float,
    permutations: int,
    seed: int,
    suite: SuiteAt | None,
    spread: SpreadAt | None = None,
) -> SeriesJudgement:
    """``judge_series`` of values *x* with the suite's noise *suite* and its metric's spread *spread*
    (callables or None)."""
    off = max(0, int(accepted_from))
    y = x[off:]
    if y.size < MIN_BASELINE + confirm or not np.all(np.isfinite(y)):
        since = f" since the accepted change at night {off + 1}" if off else ""
        return _untested(f"{y.size} nights{since}: need at least {MIN_BASELINE + confirm}")

    def change_points(upto: int) -> tuple[int, ...]:  # of the nights before *upto*, as that night saw them
        return tuple(c for c, _ in e_divisive(y[:upto], alpha=cp_alpha, permutations=permutations, seed=seed))

    cps = change_points(y.size)
    shown = tuple(off + c for c in cps)
    at_suite = (lambda k: suite(off + k)) if suite is not None else None
    at_spread = (lambda k: spread(off + k)) if spread is not None else None
    if worse:
        found = _open_regression(
            y,
            cps,
            window=window,
            confirm=confirm,
            min_effect_pct=min_effect_pct,
            alpha=alpha,
            worse=worse,
            then_cps=change_points,
            suite=at_suite,
            spread=at_spread,
        )
        if found is not None:
            return _open_judgement(y, off, shown, window, alpha, *found)
    return _tonight(y, off, cps, shown, window, confirm, min_effect_pct, alpha, at_suite, at_spread)

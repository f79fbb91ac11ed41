"""A process slowed down as cpulimit does it, by SIGSTOP and SIGCONT: for the integration tests that need a
slow server or load generator (tests/integration: test_nightly_integration.py, test_canary_integration.py,
test_steady_integration.py, through nights.py) and the docs figures' real runs (tools/site_pictures.py,
tools/multi_client_pictures.py). Only processes the caller started are signalled, and every one is continued
at the end, on error too."""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator


@contextlib.contextmanager
def paused(pid: int) -> Iterator[None]:
    """Process *pid* stopped for the ``with`` block, continued after it."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


class Throttle:
    """The processes *pids* (a pid, or a function naming them, asked again each period so that one started
    late is caught) run *share* of the time: stopped for (1 - *share*) of every *period_s*, then continued.
    ``stopped``: every pid it stopped."""

    def __init__(self, pids: int | Callable[[], Iterable[int]], share: float = 0.1, period_s: float = 0.2):
        self._pids = pids if callable(pids) else (lambda: [pids])
        self.share, self.period = share, period_s
        self.stopped: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _signal(self, pids: Iterable[int], sig: int) -> None:
        for pid in pids:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                continue
            if sig == signal.SIGSTOP:
                self.stopped.add(pid)

    def _loop(self) -> None:
        while not self._stop.is_set():
            pids = list(self._pids())
            self._signal(pids, signal.SIGSTOP)
            time.sleep(self.period * (1 - self.share))
            self._signal(pids, signal.SIGCONT)
            time.sleep(self.period * self.share)

    def __enter__(self) -> Throttle:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._signal(self._pids(), signal.SIGCONT)

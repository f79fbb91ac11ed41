"""The background-thread lifecycle both samplers share: a first sample at start, one every interval
(missed slots skipped, never bursting), a last one at stop; also a context manager."""

from __future__ import annotations

import threading
import time
from typing import Any, Self


class PeriodicSampler:
    """Subclasses call ``_init_periodic()``, implement ``sample_now()``, may override ``_prepare()``."""

    interval_s: float
    _thread: threading.Thread | None = None

    def _init_periodic(self, interval_s: float) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0")
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = None

    def _prepare(self) -> None:
        """Hook: one-time reads before the first sample (e.g. hostInfo)."""

    def sample_now(self) -> Any:
        raise NotImplementedError

    def start(self) -> Self:
        """Take the first sample and start the background thread."""
        if self._thread is not None:
            raise RuntimeError(f"{type(self).__name__} already started")
        self._stop.clear()
        self._prepare()
        self.sample_now()
        self._thread = threading.Thread(target=self._run, name=type(self).__name__, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop the thread and take a final sample. Safe to call twice."""
        thread, self._thread = self._thread, None
        if thread is None:
            return
        self._stop.set()
        thread.join(timeout=max(5.0, 3 * self.interval_s))
        self.sample_now()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        t0 = time.monotonic()
        k = 1
        while True:
            delay = t0 + k * self.interval_s - time.monotonic()
            if delay < 0:  # a slow sample: skip the missed slots rather than bursting
                k += int(-delay // self.interval_s) + 1
                continue
            if self._stop.wait(delay):
                return
            self.sample_now()
            k += 1

"""Child processes that do not outlive ycsb-runner, even when it is killed with SIGKILL.

YCSB's JVM and the embedded server run in their own session (a terminal's Ctrl-C is ycsb-runner's to
handle), so nothing would stop them if ycsb-runner died without cleaning up. On Linux each such child asks
the kernel for a signal when its parent dies (``prctl(PR_SET_PDEATHSIG)``), set between fork and exec.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import psutil

_PR_SET_PDEATHSIG = 1
PRIVATE_PREFIX = "ycsb-runner-private-"  # + the owner's pid + "-": a run's private folder (URL inside)


def _libc_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()  # resolved once, here: the child between fork and exec only calls it


def die_with_parent(sig: int = signal.SIGTERM) -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child receive *sig* when this process dies (None where unsupported).

    The kernel ties the signal to the thread that forks the child, so call ``Popen`` from a thread that
    lives as long as the child should (the main thread, in ycsb-runner)."""
    if _PRCTL is None:
        return None
    prctl = _PRCTL
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the request took effect
            os.kill(os.getpid(), sig)

    return preexec


def clear_stale_private() -> list[Path]:
    """Remove the private folders (the connection URL inside) of ycsb-runner processes that were killed
    before they could clean up; return them."""
    cleared = []
    for d in Path(tempfile.gettempdir()).glob(f"{PRIVATE_PREFIX}*-*"):
        pid = d.name[len(PRIVATE_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not psutil.pid_exists(int(pid)):
            shutil.rmtree(d, ignore_errors=True)
            cleared.append(d)
    return cleared

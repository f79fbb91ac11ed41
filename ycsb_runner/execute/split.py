"""Splitting one step's work over several load generators (pure functions, no I/O).

* Load: the key range ``[insertstart, insertstart + insertcount)`` is cut into one contiguous slice per client
  (``insertstart``/``insertcount`` per client), so the union is exactly the dataset and no key is inserted
  twice. Every client keeps the whole ``recordcount``, so hashed key names are the same as with one client.
* Threads, ``-target`` and ``operationcount``: divided evenly; the remainder goes to the first clients in
  the order given (deterministic: the same clients in the same order always get the same shares).
* Every client runs the same mix and distribution over the whole key space (``recordcount`` unchanged).
"""

from __future__ import annotations

from dataclasses import dataclass

from ycsb_runner.errors import UserError


def shares(total: int, n: int) -> list[int]:
    """*total* split into *n* whole parts that differ by at most one; the first ``total % n`` get one more."""
    if n < 1:
        raise ValueError("at least one client is needed")
    if total < 0:
        raise ValueError(f"cannot split a negative amount ({total})")
    base, extra = divmod(total, n)
    return [base + (1 if i < extra else 0) for i in range(n)]


@dataclass(frozen=True)
class ClientShare:
    """One client's part of a step."""

    client: str
    threads: int
    target: int  # ops/s for -target; 0 = unthrottled
    insertstart: int | None = None  # load steps only
    insertcount: int | None = None  # load steps only
    operationcount: int | None = None  # run steps with a fixed operation count only

    def properties(self) -> dict[str, str]:
        """The workload properties this share adds to the step's own."""
        out: dict[str, str] = {}
        if self.insertstart is not None:
            out["insertstart"] = str(self.insertstart)
        if self.insertcount is not None:
            out["insertcount"] = str(self.insertcount)
        if self.operationcount is not None:
            out["operationcount"] = str(self.operationcount)
        return out


def split_step(
    clients: list[str],
    *,
    load: bool,
    threads: int,
    target: int = 0,
    recordcount: int = 0,
    insertstart: int = 0,
    insertcount: int | None = None,
    operationcount: int | None = None,
) -> list[ClientShare]:
    """Each client's share of a load (``load=True``) or run step.

    ``insertstart``/``insertcount``: the slice of keys the step loads (default: all ``recordcount`` keys from
    0). ``operationcount``: None when the run is bounded by time only. A client that would get no thread, no
    key to load or no operation is an error (use fewer clients or more threads).
    """
    n = len(clients)
    if n < 1:
        raise ValueError("at least one client is needed")
    if len(set(clients)) != n:
        raise UserError(f"a client is named twice in {', '.join(clients)}: name each load generator once")
    if threads < n:
        raise UserError(
            f"{threads} thread(s) cannot be spread over {n} clients: set threads to {n} or more, "
            "or use fewer clients"
        )
    per_threads = shares(threads, n)
    per_target = shares(target, n) if target else [0] * n
    if target and min(per_target) < 1:
        raise UserError(f"target {target} ops/s is below one op/s per client over {n} clients: raise it")
    if load:
        count = recordcount - insertstart if insertcount is None else insertcount
        if count < n:
            raise UserError(f"{count} records cannot be loaded by {n} clients: use fewer clients")
        counts = shares(count, n)
        starts = [insertstart + sum(counts[:i]) for i in range(n)]
        return [
            ClientShare(c, t, g, insertstart=s, insertcount=k)
            for c, t, g, s, k in zip(clients, per_threads, per_target, starts, counts, strict=True)
        ]
    if operationcount is None:
        return [ClientShare(c, t, g) for c, t, g in zip(clients, per_threads, per_target, strict=True)]
    if operationcount < n:
        raise UserError(f"operationcount {operationcount} is below one operation per client over {n} clients")
    per_ops = shares(operationcount, n)
    return [
        ClientShare(c, t, g, operationcount=k)
        for c, t, g, k in zip(clients, per_threads, per_target, per_ops, strict=True)
    ]

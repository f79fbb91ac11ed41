"""Splitting a step over several load generators: keys, threads, target, operation counts."""

from __future__ import annotations

import pytest

from ycsb_runner.errors import UserError
from ycsb_runner.execute.split import shares, split_step


@pytest.mark.parametrize(("total", "n"), [(10, 3), (1000, 7), (5, 5), (0, 2), (2**31 - 1, 4)])
def test_shares_sum_and_differ_by_one_at_most(total: int, n: int) -> None:
    parts = shares(total, n)
    assert len(parts) == n and sum(parts) == total
    assert max(parts) - min(parts) <= 1
    assert parts == sorted(parts, reverse=True)  # the remainder goes to the first clients


def test_remainder_is_deterministic() -> None:
    assert shares(10, 3) == [4, 3, 3]
    assert shares(11, 3) == [4, 4, 3]


@pytest.mark.parametrize(("recordcount", "n"), [(1000, 3), (7, 7), (100003, 4), (10, 1)])
def test_load_slices_cover_the_dataset_exactly_once(recordcount: int, n: int) -> None:
    clients = [f"h{i}" for i in range(n)]
    parts = split_step(clients, load=True, threads=n * 2, recordcount=recordcount)
    keys: list[int] = []
    for p in parts:
        assert p.insertstart is not None and p.insertcount is not None
        keys.extend(range(p.insertstart, p.insertstart + p.insertcount))
    assert sorted(keys) == list(range(recordcount))  # the union is the dataset, no key twice
    assert [p.client for p in parts] == clients
    assert parts[0].properties() == {"insertstart": "0", "insertcount": str(parts[0].insertcount)}


def test_load_of_a_slice_keeps_its_offset() -> None:
    parts = split_step(["a", "b"], load=True, threads=2, recordcount=1000, insertstart=500, insertcount=301)
    assert [(p.insertstart, p.insertcount) for p in parts] == [(500, 151), (651, 150)]


def test_threads_target_and_operations_split_with_the_remainder_first() -> None:
    parts = split_step(["a", "b", "c"], load=False, threads=10, target=1001, operationcount=3002)
    assert [p.threads for p in parts] == [4, 3, 3]
    assert [p.target for p in parts] == [334, 334, 333]
    assert [p.operationcount for p in parts] == [1001, 1001, 1000]
    assert all(p.insertstart is None for p in parts)
    assert parts[2].properties() == {"operationcount": "1000"}


def test_time_bounded_run_keeps_operationcount_unset_and_no_target_stays_unthrottled() -> None:
    parts = split_step(["a", "b"], load=False, threads=4, target=0, operationcount=None)
    assert [(p.threads, p.target, p.operationcount) for p in parts] == [(2, 0, None), (2, 0, None)]
    assert parts[0].properties() == {}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"threads": 2, "load": False}, "2 thread(s) cannot be spread over 3 clients"),
        ({"threads": 3, "load": False, "target": 2}, "target 2 ops/s is below one op/s per client"),
        ({"threads": 3, "load": True, "recordcount": 2}, "2 records cannot be loaded by 3 clients"),
        ({"threads": 3, "load": False, "operationcount": 1}, "operationcount 1 is below one operation"),
    ],
)
def test_impossible_splits_are_one_line_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(UserError) as err:
        split_step(["a", "b", "c"], **kwargs)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_a_client_named_twice_is_refused() -> None:
    with pytest.raises(UserError, match="named twice"):
        split_step(["a", "a"], load=False, threads=2)

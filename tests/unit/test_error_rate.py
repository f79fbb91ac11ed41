"""The error-rate rule over a whole phase (issue 22, item 4): a failed operation the binding reports on
stderr is one failed operation, judged by ``--max-error-rate``, not an exception that fails the phase."""

from __future__ import annotations

from ycsb_runner.parse import parse_output


def _stdout(read_errors: int, update_errors: int, n: int = 1000) -> str:
    lines = ["[OVERALL], RunTime(ms), 10000", f"[OVERALL], Throughput(ops/sec), {2 * n / 10:g}"]
    for section, errors in (("READ", read_errors), ("UPDATE", update_errors)):
        lines += [
            f"[{section}], Operations, {n}",
            f"[{section}], AverageLatency(us), 900.0",
            f"[{section}], MinLatency(us), 100",
            f"[{section}], MaxLatency(us), 9000",
            f"[{section}], 95thPercentileLatency(us), 2000",
            f"[{section}], 99thPercentileLatency(us), 5000",
            f"[{section}], Return=OK, {n - errors}",
        ]
        if errors:
            lines.append(f"[{section}], Return=ERROR, {errors}")
    return "\n".join(lines) + "\n"


def _stderr(update_errors: int) -> str:
    busy = "database is locked (5) (SQLITE_BUSY)"
    return "".join(
        f"ERROR: MongoDB update key user{i} failed: MongoWriteException: {busy}\n"
        for i in range(update_errors)
    )


def test_one_failed_operation_under_the_threshold_completes_the_phase() -> None:
    run = parse_output(_stdout(0, 4), _stderr(4))  # 4 of 2000 = 0.2 %: the SQLITE_BUSY
    assert run.completion.status == "completed", run.completion.reasons
    assert run.operations.set_index("section").loc["UPDATE", "errors"] == 4


def test_the_threshold_is_over_every_operation_of_the_phase() -> None:
    # 15 of the 1,000 updates failed (1.5 % of UPDATE) but 15 of 2,000 operations (0.75 %) in the phase
    assert parse_output(_stdout(0, 15), _stderr(15)).completion.status == "completed"
    over = parse_output(_stdout(10, 15), _stderr(15)).completion  # 25 of 2,000 = 1.25 %
    assert over.status == "failed"
    assert over.reasons == [
        "error rate 1.25% (25 of 2000 operations; failed: READ 10 of 1000, UPDATE 15 of 1000) exceeds 1%"
    ]
    assert parse_output(_stdout(10, 15), _stderr(15), max_error_rate=0.02).completion.status == "completed"


def test_failures_the_summary_does_not_count_and_real_exceptions_still_fail() -> None:
    uncounted = parse_output(_stdout(0, 0), _stderr(2)).completion
    assert uncounted.status == "failed"
    assert uncounted.reasons == ["the binding reported 2 failed operation(s) that the summary does not count"]
    crash = parse_output(
        _stdout(0, 4), _stderr(4) + 'Exception in thread "Thread-3" java.lang.OutOfMemoryError\n'
    )
    assert crash.completion.status == "failed"
    assert any("exception/error line" in r and "OutOfMemoryError" in r for r in crash.completion.reasons)

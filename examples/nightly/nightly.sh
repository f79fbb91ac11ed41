#!/usr/bin/env bash
# One night: run the suite (indexed in the run history, tagged with this host), then `regress` over the
# history; exits with regress's code: 0 no regression, 1 regression, 2 cannot decide (too little history,
# the run failed or did not start). Called by cron, the systemd service and the CI workflow from the
# checkout's root.
#   NIGHTLY_SUITE     the suite (default quick)
#   NIGHTLY_ARGS      more bench options, e.g. "--set threads=8 --scale 0.1"
#   NIGHTLY_TAGS      more tags, e.g. "--tag server=7.0.12 --tag sha=abc123"
#   REGRESS_ARGS      regress options, e.g. "--confirm 1" to fail on the first slow night (default: two nights)
#   NIGHTLY_ENV_FILE  KEY=VALUE lines read first (default /etc/ycsb-runner/nightly.env when it exists), e.g.
#                     MONGODB_URL=...: read as data, never run; variables already set win
#   NIGHTLY_LOG       a log file: the night's output goes there (the last 7 nights kept as .1 ... .7) and
#                     stdout gets one line only when the night exits 1 or 2 (cron mails it to MAILTO)
#   YCSB_RUNNER_RESULTS, MONGODB_URL, YCSB_RUNNER_HISTORY_URL   as for every ycsb-runner command
# results/nightly-last.json always says what happened: bench's JSON summary, or, when bench did not start
# (an unreachable target, a refused setting), {"status": "not run", "exit_code": ..., "error": ...}.
set -u
cd "$(dirname "$0")/../.."

env_file=${NIGHTLY_ENV_FILE:-/etc/ycsb-runner/nightly.env}
if [ -n "${NIGHTLY_ENV_FILE:-}" ] && [ ! -r "$env_file" ]; then
    echo "ycsb-runner nightly: exit 2: cannot read NIGHTLY_ENV_FILE=$env_file"
    exit 2
fi
if [ -r "$env_file" ]; then
    while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in '' | '#'*) continue ;; esac
        key=${line%%=*}
        value=${line#*=}
        case "$key" in *[!A-Za-z0-9_]* | [0-9]* | '') continue ;; esac
        value=${value#\"}; value=${value%\"}
        [ -z "${!key+x}" ] && export "$key=$value"
    done < "$env_file"
fi

alert=1
if [ -n "${NIGHTLY_LOG:-}" ]; then  # rotate, then the night's output goes to the log
    mkdir -p "$(dirname "$NIGHTLY_LOG")"
    for i in 6 5 4 3 2 1; do [ -f "$NIGHTLY_LOG.$i" ] && mv -f "$NIGHTLY_LOG.$i" "$NIGHTLY_LOG.$((i + 1))"; done
    [ -f "$NIGHTLY_LOG" ] && mv -f "$NIGHTLY_LOG" "$NIGHTLY_LOG.1"
    exec 3>&1 >"$NIGHTLY_LOG" 2>&1
    alert=3
fi

runner=.venv/bin/ycsb-runner
python=.venv/bin/python
if [ ! -x "$runner" ]; then
    echo "ycsb-runner nightly: exit 2: run 'make setup' first in $(pwd)" >&"$alert"
    exit 2
fi
suite=${NIGHTLY_SUITE:-quick}
results=${YCSB_RUNNER_RESULTS:-results}
mkdir -p "$results"
summary="$results/nightly-last.json"
bench_err=$(mktemp)
trap 'rm -f "$bench_err" "$summary.tmp"' EXIT
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# shellcheck disable=SC2086  # NIGHTLY_ARGS/NIGHTLY_TAGS are option lists
"$runner" bench "$suite" ${NIGHTLY_ARGS:-} --tag "host=$(hostname)" ${NIGHTLY_TAGS:-} -f json \
    > "$summary.tmp" 2> >(tee "$bench_err" >&2)
bench_rc=$?
wait  # the tee of bench's stderr
if [ -s "$summary.tmp" ]; then
    mv -f "$summary.tmp" "$summary"
    ran=1
else  # bench stopped before a run folder existed: say so, with its one-line error
    "$python" -c 'import json, sys
err = [ln.strip() for ln in open(sys.argv[4], encoding="utf-8", errors="replace") if ln.strip()]
print(json.dumps({"suite": sys.argv[1], "status": "not run", "verdict": "not run",
                  "exit_code": int(sys.argv[2]), "started_at": sys.argv[3], "run_id": None,
                  "error": err[-1].removeprefix("error: ") if err else "bench printed nothing"}, indent=2))' \
        "$suite" "$bench_rc" "$started" "$bench_err" > "$summary"
    ran=0
fi

report="$results/regress-report"
if [ "$ran" -eq 1 ]; then
    # shellcheck disable=SC2086
    "$runner" regress "$suite" ${REGRESS_ARGS:-} --report "$report"
    rc=$?
    if [ "$bench_rc" -ne 0 ] && [ "$rc" -eq 0 ]; then rc=2; fi  # never 0 after a failed night
else  # nothing new to judge: the report says why instead of last night's verdict
    rc=2
    rm -rf "$report" && mkdir -p "$report"
    "$python" -c 'import html, json, sys
s = json.load(open(sys.argv[1], encoding="utf-8"))
suite, error = s["suite"], s["error"]
text = f"could not decide (exit 2): the bench of {suite} did not run tonight: {error}"
with open(sys.argv[2] + "/regress.md", "w", encoding="utf-8") as md:
    md.write(f"# regress {suite}\n\n{text}\n")
with open(sys.argv[2] + "/regress.html", "w", encoding="utf-8") as page:
    page.write("<!DOCTYPE html><html><head><meta charset=utf-8><title>regress</title></head><body>"
               f"<h1>regress {html.escape(suite)}</h1><p><strong>{html.escape(text)}</strong></p>"
               "</body></html>\n")' \
        "$summary" "$report"
    echo "regress not run: tonight's bench did not start (exit $bench_rc); exit 2"
fi

if [ "$rc" -ne 0 ] && [ "$alert" -eq 3 ]; then
    what=$([ "$rc" -eq 1 ] && echo "regression" || echo "could not decide")
    reason=$("$python" -c 'import json, sys; s = json.load(open(sys.argv[1])); print(s.get("error") or s.get("status"))' "$summary" 2>/dev/null)
    echo "ycsb-runner nightly $suite: exit $rc ($what; bench: ${reason:-?}); log: $NIGHTLY_LOG" >&3
fi
exit "$rc"

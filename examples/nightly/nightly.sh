#!/usr/bin/env bash
# One night: run the suite (indexed in the run history, tagged with this host), then `regress` over the
# history; exits with regress's code: 0 no regression, 1 regression, 2 cannot decide (too little history,
# the run failed). Called by cron, the systemd service and the CI workflow from the checkout's root.
#   NIGHTLY_SUITE   the suite (default quick)
#   NIGHTLY_ARGS    more bench options, e.g. "--set threads=8 --scale 0.1"
#   NIGHTLY_TAGS    more tags, e.g. "--tag server=7.0.12 --tag sha=abc123"
#   REGRESS_ARGS    regress options, e.g. "--confirm 1" to fail on the first slow night (default: two nights)
#   YCSB_RUNNER_RESULTS, MONGODB_URL, YCSB_RUNNER_HISTORY_URL   as for every ycsb-runner command
set -u
cd "$(dirname "$0")/../.."
runner=.venv/bin/ycsb-runner
[ -x "$runner" ] || { echo "run 'make setup' first" >&2; exit 2; }
suite=${NIGHTLY_SUITE:-quick}
results=${YCSB_RUNNER_RESULTS:-results}
mkdir -p "$results"
# shellcheck disable=SC2086  # NIGHTLY_ARGS/NIGHTLY_TAGS are option lists
"$runner" bench "$suite" ${NIGHTLY_ARGS:-} --tag "host=$(hostname)" ${NIGHTLY_TAGS:-} -f json \
    > "$results/nightly-last.json"
bench_rc=$?
# shellcheck disable=SC2086
"$runner" regress "$suite" ${REGRESS_ARGS:-} --report "$results/regress-report"
rc=$?
if [ "$bench_rc" -ne 0 ] && [ "$rc" -eq 0 ]; then rc=2; fi  # never 0 after a failed night
exit "$rc"

#!/usr/bin/env bash
# make docs-figures: the pictures the documentation site shows (docs/images/), made, not pasted.
# 1. a real small run of `quick` on the embedded server (recordcount 2,000, 15-s steps: about a minute;
#    --no-lock: the pictures show what a report looks like, not a figure to compare),
#    its report (report.html) as headless Chromium draws it, and two of its own charts;
# 2. the nightly report of the committed history tests/data/history/throttled-nights.sqlite (eight normal
#    nights of `quick`, then three throttled ones: a real series, see its README), regress's own chart.
# 4. two load generators' percentiles and the merged ones (a real two-client run, see below).
# No network: Chromium opens local files only; the run uses the embedded server even when MONGODB_URL is set.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
OUT=docs/images
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT"
touch "$WORK/start"
# DOCS_FIGURES_PARTS="1 4" remakes only those parts (default: all four)
PARTS=" ${DOCS_FIGURES_PARTS:-1 2 3 4} "
want() { [[ "$PARTS" == *" $1 "* ]]; }

shot() {  # shot FILE.html OUT.png WIDTH HEIGHT
    "$CHROMIUM" --headless=new --no-sandbox --disable-gpu --hide-scrollbars --force-device-scale-factor=1 \
        --window-size="$3,$4" --screenshot="$2" "file://$(realpath "$1")" >/dev/null 2>&1
    echo "$2"
}
small() {  # at most 300 KB: re-encode as a palette PNG when Pillow is there (matplotlib brings it)
    "$BIN/python" - "$@" <<'PY'
import sys
from PIL import Image
for path in sys.argv[1:]:
    img = Image.open(path).convert("RGB")
    img.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
PY
}

# 1. a real run
$BIN/ycsb-runner setup >/dev/null
if want 1; then
env -u MONGODB_URL YCSB_RUNNER_RESULTS="$WORK/results" $BIN/ycsb-runner bench quick --run-id docs-quick \
    --set recordcount=2000 --set maxexecutiontime=15 --no-canaries --no-lock --history-url "$WORK/history.sqlite" \
    >"$WORK/bench.txt" 2>"$WORK/progress.txt"
RUN="$WORK/results/docs-quick"
sed "s#$WORK/##g" "$WORK/bench.txt" >"$OUT/bench-quick.txt"  # what it prints at the end (stdout)
grep -v "^ *[0-9]* s: " "$WORK/progress.txt" | sed "s#$WORK/##g" >"$OUT/bench-quick-progress.txt"  # stderr
shot "$RUN/report.html" "$OUT/report.png" 1400 1800
# the run step whose warm-up cut is the longest (its time series has the cut shaded): its panel's number
panel=$($BIN/python -c "import sys, pandas as pd
steps = pd.read_csv(sys.argv[1]); runs = steps[steps['phase'] == 'run'].reset_index(drop=True)
print(int(runs['warmup_end_s'].fillna(0).to_numpy().argmax()) + 1)" "$RUN/steps.csv")
cp "$RUN/report-figures/timeseries-run-$panel.png" "$OUT/report-timeseries.png"
fi

# 2. the nightly report of a real history
if want 2; then
cp tests/data/history/throttled-nights.sqlite "$WORK/nights.sqlite"
until=$($BIN/python -c "import sys; from pathlib import Path; from ycsb_runner.runs.history import SqliteHistory
print(SqliteHistory(Path(sys.argv[1])).runs().set_index('run_id').loc['night-10', 'ended_at'])" "$WORK/nights.sqlite")
rc=0  # the morning after the third slow night (night-10): exit 1, a regression
$BIN/ycsb-runner regress quick --history-url "$WORK/nights.sqlite" --results "$WORK" --until "$until" \
    --report "$WORK/regress" >"$WORK/regress.txt" || rc=$?
[ "$rc" = 1 ] || { echo "regress exited $rc, expected 1 (a regression)" >&2; exit 1; }
shot "$WORK/regress/regress.html" "$OUT/regress-report.png" 1400 1800
chart=("$WORK"/regress/regress-figures/*-run-*-OVERALL-throughput_ops_s.png)
cp "${chart[0]}" "$OUT/regress-series.png"
fi

# 3. the site of a real 14-night history (`ycsb-runner site`): its overview and a series page
#    (tools/site_pictures.py: the last six nights throttled, the change accepted after night 10; ~10 min)
if want 3; then
$BIN/python tools/site_pictures.py --images "$OUT"
ls "$OUT/site-overview.png" "$OUT/site-series.png" >/dev/null
fi

# 4. the merged percentiles of two load generators (docs/concepts/merged-percentiles.md): a real run of two
#    clients, each reached through its own sshd on a loopback port (tools/multi_client_pictures.py: about a
#    minute), kept in docs/data/multi-client/; without sshd, drawn from the run committed there
if ! want 4; then
    :
elif command -v sshd >/dev/null 2>&1 || [ -x /usr/sbin/sshd ]; then
    $BIN/python tools/multi_client_pictures.py --run --image "$OUT/merged-percentiles.png" \
        --summary "$OUT/merged-percentiles.txt"
else
    echo "no sshd (apt-get install -y openssh-server): merged-percentiles.png drawn from docs/data/multi-client/" >&2
    $BIN/python tools/multi_client_pictures.py --image "$OUT/merged-percentiles.png" \
        --summary "$OUT/merged-percentiles.txt"
fi

mapfile -t made < <(find "$OUT" -name '*.png' -newer "$WORK/start")
[ "${#made[@]}" = 0 ] || small "${made[@]}"
ls -l "$OUT"

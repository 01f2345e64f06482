#!/bin/sh
# An exploration campaign of the real JobSet controller: N drawn scenarios from base seed S, on every
# core, at the lowest CPU priority (a campaign is for idle cycles, never CI). Findings are shrunk
# scenario files in OUT, ready for scenarios/regressions/; the log ends with the rate.
#
#   scripts/campaign.sh                          # 10,000 seeds from seed 0 into build/campaign/
#   scripts/campaign.sh 2000 0 build/c2000       # N, S, OUT
#   scripts/campaign.sh 2000 0 build/c2000s --shuffle-ties --workers 2   # more explore options
#
# Same N and S: same findings (docs/scenario-format.md, "fakecluster explore"). Exit status: explore's
# (1 if anything was found).
set -eu
seeds=${1:-10000}
base=${2:-0}
out=${3:-build/campaign}
[ $# -ge 3 ] && shift 3 || shift $#
python=${PYTHON:-.venv/bin/python}
mkdir -p "$out"
status=0
nice -n 19 "$python" -m fakecluster explore --seeds "$seeds" --seed "$base" --out "$out" "$@" \
    > "$out/campaign.log" 2>&1 || status=$?
cat "$out/campaign.log"
exit "$status"

#!/usr/bin/env bash
# Phase D: a WinningPoSt 32 GiB sent while a PoRep C2 c=8 load runs (issue 12): its queue wait
# and total latency. The PoRep load stops at DEADLINE (default 150 s; unfinished jobs are
# cancelled by the daemon when the client goes away).
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
M=/tmp/t32/manifest.json
gpu_sample c8
( $D/cuzk bench batch -k porep -i $M -c 8 -j 8 --timeline /tmp/c8.svg --deadline ${DEADLINE:-150} > /tmp/bench-c8.log 2>&1 ) &
B=$!
sleep ${WINNING_AT:-60}
echo "== WinningPoSt under the c=8 load ($(( $(date +%s) - T0 )) s in)"
$D/cuzk status 2>&1 | grep -iE "reserved|in flight|partitions|queue" | head -12
$D/cuzk bench single -k winning -i $M 2>&1 | tee /tmp/bench-winning-c8.log | tail -14
wait $B
gpu_stop; smi_summary /tmp/smi-c8.csv
tail -30 /tmp/bench-c8.log; vmhwm
grep -E "winning" /tmp/daemon.log | grep -iE "queue|wait|admit|srs|evict" | cut -c1-300 | tail -8
save
echo "== phase D done at $(( $(date +%s) - T0 )) s"

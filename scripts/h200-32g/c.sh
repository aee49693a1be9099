#!/usr/bin/env bash
# Phase C: c=30, every job at once, 600 s deadline; a WinningPoSt 32 GiB sent 240 s in.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
M=/tmp/t32/manifest.json
gpu_sample c30
( $D/cuzk bench batch -k porep -i $M -c 30 -j 30 --timeline /tmp/c30.svg --deadline ${DEADLINE:-570} > /tmp/bench-c30.log 2>&1 ) &
B=$!
sleep 240
echo "== WinningPoSt under the c=30 load ($(( $(date +%s) - T0 )) s in)"
$D/cuzk bench single -k winning -i $M 2>&1 | tee /tmp/bench-winning.log | tail -14
wait $B
gpu_stop; smi_summary /tmp/smi-c30.csv
tail -30 /tmp/bench-c30.log; vmhwm
$D/cuzk status 2>&1 | head -40
grep -cE "OOM|Killed" /tmp/daemon.log; dmesg 2>/dev/null | grep -i -E "oom|killed process" | tail -3
save
echo "== phase C done at $(( $(date +%s) - T0 )) s"

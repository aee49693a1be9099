#!/usr/bin/env bash
# Phase B: PoRep C2 32 GiB at c=1 j=1 and c=2 j=4 through the running daemon.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
while ! grep -q "SRS loaded" /tmp/daemon.log && [ $(( $(date +%s) - T0 )) -lt 200 ]; do sleep 2; done
grep -E "SRS|compiled|resident" /tmp/daemon.log | cut -c1-300 | tail -6
$D/cuzk status 2>&1 | head -30; vmhwm
M=/tmp/t32/manifest.json
echo "== c=1 j=1 ($(( $(date +%s) - T0 )) s in)"
gpu_sample c1
$D/cuzk bench batch -k porep -i $M -c 1 -j 1 --timeline /tmp/c1.svg --deadline 240 2>&1 | tee /tmp/bench-c1.log | tail -22
gpu_stop; smi_summary /tmp/smi-c1.csv; vmhwm
LEFT=$(( 560 - ( $(date +%s) - T0 ) ))
echo "== c=2 j=4, deadline $LEFT s ($(( $(date +%s) - T0 )) s in)"
gpu_sample c2
$D/cuzk bench batch -k porep -i $M -c 2 -j 4 --timeline /tmp/c2.svg --deadline $LEFT 2>&1 | tee /tmp/bench-c2.log | tail -22
gpu_stop; smi_summary /tmp/smi-c2.csv; vmhwm
$D/cuzk status 2>&1 | head -40
save
echo "== phase B done at $(( $(date +%s) - T0 )) s"

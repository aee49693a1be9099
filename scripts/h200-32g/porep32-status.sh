#!/usr/bin/env bash
# Phase H (issue 13 item 4), one call on a fresh machine: porep-32g TIMING-ONLY parameters and
# the 32 GiB requests, the daemon (default config plus the timing-only allowance) with
# porep-32g preloaded, then PoRep C2 c=2 j=4 until $DEADLINE s, with `cuzk status` sampled
# every 15 s: how many partitions are in flight at once with the CUDA prover's reservations
# (the partition plus its MSM plans, counted), reserved against measured, VmHWM against the
# budget. Everything is TIMING-ONLY: the proofs do not verify.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
free -g | head -2
( time timeout 300 $D/cuzk gen timing-params --circuit porep-32g --out /tmp/p32 ) > $OUT/gen-porep.log 2>&1; echo "porep params rc=$? at $(( $(date +%s) - T0 )) s"
timeout 60 $D/cuzk gen testdata --sector-size 32GiB --timing-only --out /tmp/t32 > $OUT/gen-testdata.log 2>&1; echo "testdata rc=$?"
start_daemon porep-32g 420
grep -E "WARN|ERROR|compiled|resident|budget" /tmp/daemon.log | cut -c1-300 | tail -6
$D/cuzk status 2>&1 | grep -E "memory|reserved|partitions"; vmhwm
LEFT=$(( ${DEADLINE:-585} - ( $(date +%s) - T0 ) ))
echo "== c=2 j=4, deadline $LEFT s ($(( $(date +%s) - T0 )) s in)"
gpu_sample h
( while sleep 15; do echo "-- status at $(( $(date +%s) - T0 )) s"; $D/cuzk status 2>&1 | grep -E "memory:|per partition|partitions:"; vmhwm; done ) > /tmp/bench-h-status.log 2>&1 &
SP=$!
$D/cuzk bench batch -k porep -i /tmp/t32/manifest.json -c 2 -j 4 --timeline /tmp/h.svg --deadline $LEFT 2>&1 | tee /tmp/bench-h.log | tail -22
kill $SP 2>/dev/null
gpu_stop; smi_summary /tmp/smi-h.csv
cat /tmp/bench-h-status.log
grep -cE "working set above its estimate" /tmp/daemon.log
$D/cuzk status 2>&1 | head -30; vmhwm
save
echo "== phase H done at $(( $(date +%s) - T0 )) s"

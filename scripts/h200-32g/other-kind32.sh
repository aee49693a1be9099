#!/usr/bin/env bash
# Phase F (a fresh machine): one 32 GiB proof of another kind through the daemon:
# TIMING-ONLY parameters of CIRCUIT (default wpost-32g) on the disk, the shape-true requests,
# the daemon with that SRS preloaded, then `cuzk bench single -k KIND` (default wpost).
# Writes its logs under $OUT as it goes, so a call cut short still returns them.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
CIRCUIT=${CIRCUIT:-wpost-32g}; KIND=${KIND:-wpost}
free -g | head -2; df -h /tmp | tail -1
echo "== gen timing-params $CIRCUIT"
( time timeout 330 $D/cuzk gen timing-params --circuit $CIRCUIT --out /tmp/p32 ) > $OUT/gen-$CIRCUIT.log 2>&1; echo rc=$?
tail -6 $OUT/gen-$CIRCUIT.log
( time timeout 60 $D/cuzk gen testdata --sector-size 32GiB --timing-only --out /tmp/t32 ) > $OUT/gen-testdata.log 2>&1; echo testdata rc=$?
start_daemon $CIRCUIT 420
grep -E "WARN|ERROR|SRS|compiled|resident|budget" /tmp/daemon.log | cut -c1-300 | tail -8; save
echo "== bench single -k $KIND ($(( $(date +%s) - T0 )) s in)"
gpu_sample $KIND
timeout $(( 590 - ( $(date +%s) - T0 ) )) $D/cuzk bench single -k $KIND -i /tmp/t32/manifest.json 2>&1 | tee /tmp/bench-$KIND.log | tail -16
gpu_stop; smi_summary /tmp/smi-$KIND.csv; vmhwm
$D/cuzk status 2>&1 | head -24
save
echo "== phase F done at $(( $(date +%s) - T0 )) s"

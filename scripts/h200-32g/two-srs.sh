#!/usr/bin/env bash
# Phase G (issue 12 item 3): two 32 GiB SRSs sharing one card, in two calls on one machine.
# `two-srs.sh gen` (a fresh machine): TIMING-ONLY porep-32g parameters on the disk, snap-32g in
# /dev/shm (the 64 GiB disk holds one such file), linked into /tmp/p32, and the requests.
# `two-srs.sh run` (the next call): the daemon with both preloaded and a budget of $BUDGET (default
# 84GiB: the /dev/shm file's 32 GiB stay outside it), its status (which SRS is resident on the
# device, which streams, what was evicted), a SnapDeals proof, a PoRep C2 c=1 j=1, the status
# again. Everything is TIMING-ONLY: the proofs do not verify.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
case "${1:-}" in
gen)
  free -g | head -2; df -h /tmp /dev/shm | tail -2
  ( time timeout 300 $D/cuzk gen timing-params --circuit porep-32g --out /tmp/p32 ) > $OUT/gen-porep.log 2>&1; echo porep rc=$?
  mkdir -p /dev/shm/p32s
  ( time timeout 240 $D/cuzk gen timing-params --circuit snap-32g --out /dev/shm/p32s ) > $OUT/gen-snap.log 2>&1; echo snap rc=$?
  for f in /dev/shm/p32s/v28-*; do ln -sf "$f" /tmp/p32/; done
  timeout 60 $D/cuzk gen testdata --sector-size 32GiB --timing-only --out /tmp/t32 > $OUT/gen-testdata.log 2>&1; echo testdata rc=$?
  ls -la /tmp/p32; df -h /tmp /dev/shm | tail -2; free -g | head -2
  echo "== phase G gen done at $(( $(date +%s) - T0 )) s"
  ;;
run)
  export BUDGET=${BUDGET:-84GiB}
  start_daemon "porep-32g snap-32g" 320
  grep -E "WARN|ERROR|SRS|compiled|resident|stream|evict|budget" /tmp/daemon.log | cut -c1-300 | tail -14
  $D/cuzk status 2>&1 | head -30; vmhwm; save
  echo "== bench single -k snap ($(( $(date +%s) - T0 )) s in)"
  gpu_sample g
  timeout 200 $D/cuzk bench single -k snap -i /tmp/t32/manifest.json 2>&1 | tee /tmp/bench-g-snap.log | tail -8
  echo "== bench batch -k porep -c 1 -j 1 ($(( $(date +%s) - T0 )) s in)"
  timeout $(( 585 - ( $(date +%s) - T0 ) )) $D/cuzk bench batch -k porep -i /tmp/t32/manifest.json -c 1 -j 1 2>&1 | tee /tmp/bench-g-porep.log | tail -8
  gpu_stop; smi_summary /tmp/smi-g.csv
  grep -E "resident|stream|evict" /tmp/daemon.log | cut -c1-300 | tail -10
  $D/cuzk status 2>&1 | head -30; vmhwm; save
  echo "== phase G run done at $(( $(date +%s) - T0 )) s"
  ;;
*) echo "usage: two-srs.sh gen | two-srs.sh run" >&2; exit 2 ;;
esac

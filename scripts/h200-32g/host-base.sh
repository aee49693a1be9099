#!/usr/bin/env bash
# Phase L (issue 13 item 3), one call on a fresh machine: porep-32g TIMING-ONLY parameters,
# the daemon (default config plus the timing-only allowance) with porep-32g preloaded, and
# the host's fixed base once it is loaded: the SRS's points and its compiled matrices both
# resident in VRAM and released from host memory. Then, until $DEADLINE s, PoRep C2 c=1
# j=1 (TIMING-ONLY: the proof does not verify) and the base again after it.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
( time timeout 300 $D/cuzk gen timing-params --circuit porep-32g --out /tmp/p32 ) > $OUT/gen-porep.log 2>&1; echo "porep params rc=$? at $(( $(date +%s) - T0 )) s"
timeout 60 $D/cuzk gen testdata --sector-size 32GiB --timing-only --out /tmp/t32 > $OUT/gen-testdata.log 2>&1; echo "testdata rc=$?"
start_daemon porep-32g ${LOAD_BY:-480}
sleep 3
grep -E "WARN|ERROR|compiled|resident|released|SRS loaded" /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-260 | tail -8
echo "== loaded ($(( $(date +%s) - T0 )) s in): the fixed base"
$D/cuzk status 2>&1 | grep -E "memory|reserved|porep-32g"; vmhwm
LEFT=$(( ${DEADLINE:-585} - ( $(date +%s) - T0 ) ))
if [ $LEFT -gt 60 ]; then
  $D/cuzk bench batch -k porep -i /tmp/t32/manifest.json -c 1 -j 1 --deadline $LEFT 2>&1 | tee /tmp/bench-l.log | grep -E "proofs:|throughput|peak|busy"
  echo "== after the proof ($(( $(date +%s) - T0 )) s in)"
  $D/cuzk status 2>&1 | grep -E "memory|reserved|porep-32g"; vmhwm
fi
save
echo "== phase L done at $(( $(date +%s) - T0 )) s"

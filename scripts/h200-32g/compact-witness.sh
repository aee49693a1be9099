#!/usr/bin/env bash
# Phase M (issue 13 item 2: the compact host witness), calls back to back on one machine.
# `compact-witness.sh prep` (a fresh machine): gpu_vs_cpu and device_abc (GPU proof bytes against the CPU
#   backend's; NO_TESTS=1 skips them), porep-32g TIMING-ONLY parameters and the 32 GiB requests, then the daemon with
#   porep-32g preloaded (`[pipeline] synthesis_concurrency` $SYNTH when set) started in its own
#   session; the call returns while it loads.
# `compact-witness.sh run`: waits for the load, prints the fixed base, then PoRep C2 c=$C j=$J (2, 4) until
#   $DEADLINE s from the call's start, `cuzk status` and the daemon's VmRSS sampled every 10 s:
#   partitions by stage, each partition's reservation against its measured bytes. The RSS
#   growth per partition in flight is (VmRSS - the base) / the partitions in flight.
# `compact-witness.sh restart`: stops the daemon and starts it again ($SYNTH unset: the default config).
# DEVICE_ABC=false (prep, restart) has a/b/c made on the host and uploaded instead.
# Everything is TIMING-ONLY: the proofs do not verify.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
case "${1:-}" in
prep)
  prep_32g
  start_daemon porep-32g 0
  ;;
restart)
  pkill -x cuzk; sleep 5
  start_daemon porep-32g 0
  ;;
run)
  while ! grep -q "SRS loaded" /tmp/daemon.log && [ $(( $(date +%s) - T0 )) -lt 240 ]; do sleep 2; done
  grep -E "WARN|ERROR|compiled|resident|released|SRS loaded" /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-260 | tail -6
  echo "== loaded ($(( $(date +%s) - T0 )) s in): the fixed base"
  $D/cuzk status 2>&1 | grep -E "memory|reserved|porep-32g"; vmhwm
  LEFT=$(( ${DEADLINE:-585} - ( $(date +%s) - T0 ) ))
  echo "== c=${C:-2} j=${J:-4}, deadline $LEFT s ($(( $(date +%s) - T0 )) s in)"
  sampled_batch m ${C:-2} ${J:-4} $LEFT
  cat /tmp/bench-m-status.log
  grep -cE "working set above its estimate" /tmp/daemon.log
  $D/cuzk status 2>&1 | head -30; vmhwm
  save; cp -f /tmp/bench-m-status.log $OUT/ 2>/dev/null
  ;;
*) echo "usage: compact-witness.sh prep|run|restart" >&2; exit 2 ;;
esac
echo "== phase M ${1:-} done at $(( $(date +%s) - T0 )) s"

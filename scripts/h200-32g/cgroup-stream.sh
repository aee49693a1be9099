#!/usr/bin/env bash
# Phase N (issue 13: a 32 GiB PoRep proof inside a 32 GiB cgroup), calls back to back on one
# machine.
# `cgroup-stream.sh prep` (a fresh machine): gpu_vs_cpu and device_abc (GPU proof bytes against the CPU
#   backend's; NO_TESTS=1 skips them), porep-32g TIMING-ONLY parameters and the 32 GiB
#   requests, then the daemon started inside a cgroup v2 with memory.max = $CGROUP_MAX (32G),
#   its budget derived from the cgroup, porep-32g preloaded: the SRS streams from its file
#   into VRAM a window at a time. The call returns while it loads.
# `cgroup-stream.sh run`: waits for the load; the load's peak (VmHWM) and the fixed base; PoRep C2 c=1 j=1,
#   then c=$C j=$J (2, 4) until $DEADLINE s from the call's start; the cgroup's memory.peak and
#   memory.events (oom, oom_kill), the daemon's VmHWM.
# Everything is TIMING-ONLY: the proofs do not verify.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
CG=/sys/fs/cgroup/cuzk-${CGROUP_MAX:-32G}
case "${1:-}" in
prep)
  prep_32g
  ls -l /tmp/p32
  mkdir -p $CG
  echo "+memory" > /sys/fs/cgroup/cgroup.subtree_control
  echo ${CGROUP_MAX:-32G} > $CG/memory.max; echo "memory.max $(cat $CG/memory.max)"
  DAEMON_CGROUP=$CG start_daemon porep-32g 0
  sleep 5; P=$(pgrep -x cuzk | head -1); echo "daemon $P cgroup: $(cat /proc/$P/cgroup)"
  grep -m1 budget /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-250
  ;;
run)
  while ! grep -q "SRS loaded\|rror" /tmp/daemon.log && [ $(( $(date +%s) - T0 )) -lt 240 ]; do sleep 2; done
  grep -E "WARN|ERROR|compiled|resident|released|streamed|SRS loaded" /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-300 | tail -8
  echo "== loaded ($(( $(date +%s) - T0 )) s in): the load's peak and the fixed base"
  vmhwm; $D/cuzk status 2>&1 | grep -E "memory|reserved|porep-32g"
  echo "cgroup memory.peak $(cat $CG/memory.peak) memory.current $(cat $CG/memory.current) events: $(cat $CG/memory.events | tr '\n' ' ')"
  echo "== c=1 j=1 ($(( $(date +%s) - T0 )) s in)"
  $D/cuzk bench batch -k porep -i /tmp/t32/manifest.json -c 1 -j 1 --timeline /tmp/n1.svg --deadline 200 2>&1 | tee /tmp/bench-n1.log | tail -14
  vmhwm
  LEFT=$(( ${DEADLINE:-570} - ( $(date +%s) - T0 ) ))
  echo "== c=${C:-2} j=${J:-4}, deadline $LEFT s ($(( $(date +%s) - T0 )) s in)"
  sampled_batch n ${C:-2} ${J:-4} $LEFT "echo cg \$(cat $CG/memory.current)"
  tail -20 /tmp/bench-n-status.log
  $D/cuzk status 2>&1 | head -30; vmhwm
  echo "cgroup memory.peak $(cat $CG/memory.peak) events: $(cat $CG/memory.events | tr '\n' ' ')"
  save; cp -f /tmp/bench-n-status.log $OUT/ 2>/dev/null
  ;;
*) echo "usage: cgroup-stream.sh prep|run" >&2; exit 2 ;;
esac
echo "== phase N ${1:-} done at $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# Issue 30 (below sppark's floor), one setsid run on a fresh H200 polled across calls:
#   OUT=/tmp/o setsid nohup bash scripts/h200-32g/sorted-msm.sh > /tmp/all.log 2>&1 < /dev/null &
# `cuzk-gpu-bench msm` at 2^24–2^27 (sppark's msm_t, the queued and the sorted MSM on the same
# inputs, in one process) unless NO_MSM=1; TIMING-ONLY porep-32g parameters and the 32 GiB
# requests (prep_32g; TESTS=1 runs the GPU tests first); then, for each of $MODES (default
# "true false true"), the daemon restarted with `[gpu] sorted_msm = MODE` and PoRep C2 c=2 j=4
# until $DEADLINE (200) s, every partition's phases logged (cuzk_cuda=debug) and their medians
# printed (the per-partition phase table). `ALLDONE` ends the log.
# Everything is TIMING-ONLY: the proofs do not verify.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
export RUST_LOG=info,cuzk_cuda=debug
if [ -z "${NO_MSM:-}" ]; then
  echo "== cuzk-gpu-bench msm ($(( $(date +%s) - T0 )) s in)"
  timeout 200 $D/cuzk-gpu-bench msm --log-n 24,26,27 --runs 3 2>&1 | grep -v "bases made"
fi
if [ -n "${TESTS:-}" ]; then NO_TESTS= prep_32g; else NO_TESTS=1 prep_32g; fi
for m in ${MODES:-true false true}; do
  echo "== [gpu] sorted_msm = $m ($(( $(date +%s) - T0 )) s in)"
  SORTED=$m start_daemon porep-32g $(( $(date +%s) - T0 + 300 ))
  sampled_batch sorted-$m 2 4 ${DEADLINE:-200}
  phases /tmp/daemon.log
  cp -f /tmp/daemon.log /tmp/daemon-sorted-$m.log
  stop_daemon
done
save
echo "ALLDONE at $(( $(date +%s) - T0 )) s"

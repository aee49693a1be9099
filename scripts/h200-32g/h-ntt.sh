#!/usr/bin/env bash
# Issue 30, the H polynomial by six NTTs (h_ntt.cuh), checked against the build before it on
# one card, one `setsid` run polled across calls. Binaries in $CUZK_BIN_DIR (gzipped or not):
# gpu_vs_cpu and device_abc of the new build, cuzk-gpu-bench of the build before the change
# (gpu-bench-old) and after it (gpu-bench-new).
#   tests: gpu_vs_cpu and device_abc (GPU proof bytes equal the CPU backend's, and verify);
#   bench: `cuzk-gpu-bench bench --log-n $LOGN (26) --runs 3 --pipeline 4`, old, new, old, new
#          ($ORDER) in one process each on the same TIMING-ONLY parameters and partitions (their
#          proofs do not verify): each single run's phases (ntt_h among them) and the proofs'
#          bytes, which must be equal across the builds (same parameters, partitions, r and s).
# `h-ntt.sh start` returns at once (log /tmp/h.log); `h-ntt.sh wait [SECS]` prints what the log
# gained since the last call until the run ends or SECS (540) pass.
set -uo pipefail
. "$(dirname "$0")/common.sh"
LOG=/tmp/h.log

run() {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; free -g | head -2
  for phase in ${PHASES:-tests bench}; do
    echo "== $phase ($(( $(date +%s) - T0 )) s in)"
    case $phase in
    tests) gpu_tests ;;
    bench)
      for b in ${ORDER:-old new old new}; do
        echo "-- gpu-bench-$b ($(( $(date +%s) - T0 )) s in)"
        $D/gpu-bench-$b bench --log-n ${LOGN:-26} --runs 3 --pipeline 4 > /tmp/bench-$b.out 2> /tmp/bench-$b.err
        echo "rc=$?"
        grep -E "single|pipelined|timing-only SRS" /tmp/bench-$b.err | cut -c1-400
        grep -E "^proof" /tmp/bench-$b.out | cut -c1-60 | sed 's/$/…/'
        grep -E "^proof" /tmp/bench-$b.out | md5sum | sed "s/^/proof bytes md5 ($b): /"
      done
      ;;
    esac
  done
  echo "== h done at $(( $(date +%s) - T0 )) s"
}

case "${1:-}" in
start)
  detach $LOG /tmp/hout $0
  ;;
run-inner)
  run
  ;;
wait)
  follow $LOG "== h done" ${2:-540}
  cp -f $LOG /tmp/hout/*.log /tmp/bench-*.err $OUT/ 2>/dev/null; true
  ;;
*) echo "usage: h-ntt.sh start|wait [SECS]" >&2; exit 2 ;;
esac

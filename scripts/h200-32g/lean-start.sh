#!/usr/bin/env bash
# Phase W (issue 29: a lean start), calls back to back on one machine.
# `lean-start.sh prep` (a fresh machine): gpu_vs_cpu and device_abc (NO_TESTS=1 skips them), porep-32g
#   TIMING-ONLY parameters and the 32 GiB requests; then the cold start: the daemon compiles
#   porep-32g (its compiled cache, /tmp/p32/cuzk-compiled, is empty) and writes the cache;
#   start to loaded and the start's VmHWM; one PoRep C2 c=1 j=1 (its partitions' working sets
#   are measured and kept beside the cache); the daemon stopped.
# `lean-start.sh warm`: the warm start timed (start to porep-32g loaded, the matrices streamed from the
#   cache into VRAM; start to the first 32 GiB proof completed), its VmHWM; PoRep C2 c=2 j=4
#   without a cgroup (the reference), then the same inside a cgroup v2 with memory.max 8G
#   (budget derived from it): s/proof of each, memory.peak, memory.events, VmHWM. First, what
#   the page cache gives: the parameter file read once with dd (one thread, 64 MiB blocks).
# `lean-start.sh big`: inside the 8G cgroup, c=30 j=30 until $DEADLINE (240) s; then inside a 4G
#   cgroup, c=2 j=4; then, where the kernel lets it drop the page cache, a start from the disk.
# `lean-start.sh all` (a fresh machine, for when calls are few): prep without the tests; then, inside
#   the 8G cgroup, the warm start timed to loaded and to the first proof, and c=30 j=30 until
#   $DEADLINE (150) s; then inside a 4G cgroup c=2 j=4. Run it with setsid (it outlives a call:
#   `setsid nohup bash scripts/h200-32g/lean-start.sh all > /tmp/all.log 2>&1 &`) and poll the log.
# `lean-start.sh full` (a fresh machine, one setsid run polled across calls): prep with the tests and
#   the NI-PoRep request; the cold start and c=1 j=1; the page cache read by dd; the warm start and
#   c=2 j=4 without a cgroup, then the warm start, the first proof and c=2 j=4 inside 8G (the
#   same binary, the ratio); c=30 j=30 inside 8G until $DEADLINE (150) s with the request buffer
#   $C30_REQBUF (460MiB, budget/16 of an 8 GiB cgroup); then `ni-porep32.sh` with PREPPED=1.
# `lean-start.sh cold` (a fresh machine, one setsid run polled across calls): prep without the tests;
#   the cold start inside the 8G cgroup (porep-32g compiled from one challenge straight into the
#   empty cache): start to loaded, the compile's own time, VmHWM; the first proof; c=2 j=4
#   inside 8G; then the warm start inside 8G and c=2 j=4 without a cgroup (the reference).
#   COLD_ONLY=1 stops after c=2 j=4 inside 8G on the cold-started daemon. COLD_CG (8G) sizes
#   the cold start's cgroup (an H100 holds porep-32g's SRS on the host: 56G there); PREPPED=1
#   keeps the parameters and requests of an earlier run on this machine.
# Everything is TIMING-ONLY: the proofs do not verify.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
# timed_start TAG: starts the daemon (in $DAEMON_CGROUP when set), and reports seconds from
# the start to porep-32g loaded, and the daemon's own load figures.
timed_start() {
  local t; t=$(now)
  start_daemon porep-32g $(( $(date +%s) - T0 + 300 ))
  echo "$1: start to porep-32g loaded: $(since $t) s; $(vmhwm)"
  grep -E "budget|compiled|resident|streamed|SRS loaded|WARN|ERROR" /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-330 | tail -8
  START=$t
}
# first_proof TAG: timed_start TAG, then one PoRep C2 proof, timed from the start too.
first_proof() {
  timed_start $1
  batch $1-first 1 1 120
  echo "$1: start to the first 32 GiB proof completed: $(since $START) s"
}
batch() { # batch TAG C J DEADLINE
  $D/cuzk bench batch -k porep -i /tmp/t32/manifest.json -c $2 -j $3 --timeline /tmp/$1.svg --deadline $4 2>&1 | tee /tmp/bench-$1.log | tail -14
}
case "${1:-}" in
prep)
  prep_32g
  rm -rf /tmp/p32/cuzk-compiled
  echo "== cold start (the compiled cache empty), $(( $(date +%s) - T0 )) s in"
  timed_start cold
  echo "== c=1 j=1 ($(( $(date +%s) - T0 )) s in)"
  batch w1 1 1 200; vmhwm
  ls -l /tmp/p32/cuzk-compiled /tmp/p32/cuzk-compiled/* 2>&1 | head
  save; stop_daemon
  ;;
warm)
  PF=$(ls -S /tmp/p32/*.params | head -1)
  echo "== the page cache: $PF read by dd: $(dd if=$PF of=/dev/null bs=64M 2>&1 | tail -1)"
  echo "== warm start, no cgroup"
  first_proof warm
  echo "== c=2 j=4, no cgroup ($(( $(date +%s) - T0 )) s in)"
  batch wref 2 4 200; vmhwm
  stop_daemon
  CG=$(cgroup 8G)
  echo "== warm start inside $CG ($(( $(date +%s) - T0 )) s in)"
  DAEMON_CGROUP=$CG timed_start warm-8g
  echo "== c=2 j=4 inside 8G ($(( $(date +%s) - T0 )) s in)"
  batch w8 2 4 200; vmhwm; cg_report $CG
  save; stop_daemon
  ;;
big)
  CG=$(cgroup 8G)
  DAEMON_CGROUP=$CG timed_start big-8g
  echo "== c=30 j=30 inside 8G, deadline ${DEADLINE:-240} s ($(( $(date +%s) - T0 )) s in)"
  sampled_batch w30 30 30 ${DEADLINE:-240} "echo cg \$(cat $CG/memory.current)"
  echo "refused (RESOURCE_EXHAUSTED): $(grep -c ResourceExhausted /tmp/bench-w30.log)"
  vmhwm; cg_report $CG; $D/cuzk status 2>&1 | grep -E "memory|reserved|refus" | head
  stop_daemon
  CG=$(cgroup 4G)
  DAEMON_CGROUP=$CG timed_start warm-4g
  echo "== c=2 j=4 inside 4G ($(( $(date +%s) - T0 )) s in)"
  batch w4 2 4 200; vmhwm; cg_report $CG
  echo "refused (RESOURCE_EXHAUSTED): $(grep -c ResourceExhausted /tmp/bench-w4.log)"
  stop_daemon
  if sync && echo 3 > /proc/sys/vm/drop_caches; then
    echo "== page cache dropped: a start from the disk ($(( $(date +%s) - T0 )) s in)"
    timed_start disk
    stop_daemon
  else
    echo "== the page cache cannot be dropped here: no start from the disk"
  fi
  save
  ;;
all)
  NO_TESTS=1 bash "$0" prep
  CG=$(cgroup 8G)
  echo "== warm start inside $CG ($(( $(date +%s) - T0 )) s in)"
  DAEMON_CGROUP=$CG first_proof warm-8g
  echo "== c=30 j=30 inside 8G, deadline ${DEADLINE:-150} s ($(( $(date +%s) - T0 )) s in)"
  sampled_batch w30 30 30 ${DEADLINE:-150} "echo cg \$(cat $CG/memory.current)"
  echo "refused (RESOURCE_EXHAUSTED): $(grep -c ResourceExhausted /tmp/bench-w30.log)"
  vmhwm; cg_report $CG
  save; stop_daemon
  CG=$(cgroup 4G)
  DAEMON_CGROUP=$CG timed_start warm-4g
  echo "== c=2 j=4 inside 4G ($(( $(date +%s) - T0 )) s in)"
  batch w4 2 4 200; vmhwm; cg_report $CG
  echo "refused (RESOURCE_EXHAUSTED): $(grep -c ResourceExhausted /tmp/bench-w4.log)"
  save; stop_daemon
  ;;
cold)
  [ -z "${PREPPED:-}" ] && NO_TESTS=1 prep_32g
  rm -rf /tmp/p32/cuzk-compiled
  CG=$(cgroup ${COLD_CG:-8G})
  echo "== cold start inside $CG, the compiled cache empty ($(( $(date +%s) - T0 )) s in)"
  DAEMON_CGROUP=$CG first_proof cold-${COLD_CG:-8G}
  echo "== c=2 j=4 inside ${COLD_CG:-8G} ($(( $(date +%s) - T0 )) s in)"
  batch c8 2 4 200; vmhwm; cg_report $CG
  ls -l /tmp/p32/cuzk-compiled
  [ -n "${COLD_ONLY:-}" ] && { save; stop_daemon; exit 0; }
  save; stop_daemon
  CG=$(cgroup 8G)
  echo "== warm start inside $CG ($(( $(date +%s) - T0 )) s in)"
  DAEMON_CGROUP=$CG timed_start warm-8g
  batch w8 2 4 200; vmhwm; cg_report $CG
  stop_daemon
  echo "== warm start, no cgroup ($(( $(date +%s) - T0 )) s in)"
  timed_start warm
  batch wref 2 4 200; vmhwm
  save; stop_daemon
  ;;
full)
  NI=1 bash "$0" prep
  bash "$0" warm
  CG=$(cgroup 8G)
  echo "== c=30 j=30 inside 8G, request buffer ${C30_REQBUF:-460MiB}, deadline ${DEADLINE:-150} s ($(( $(date +%s) - T0 )) s in)"
  DAEMON_CGROUP=$CG REQBUF=${C30_REQBUF:-460MiB} timed_start c30-8g
  sampled_batch w30 30 30 ${DEADLINE:-150} "echo cg \$(cat $CG/memory.current)"
  echo "refused (RESOURCE_EXHAUSTED): $(grep -c ResourceExhausted /tmp/bench-w30.log)"
  vmhwm; cg_report $CG; $D/cuzk status 2>&1 | grep -E "memory|reserved|refus" | head
  save; stop_daemon
  PREPPED=1 NIJ=${NIJ:-1} bash "$(dirname "$0")/ni-porep32.sh"
  ;;
*) echo "usage: lean-start.sh prep|warm|big|all|full|cold" >&2; exit 2 ;;
esac
echo "== phase W ${1:-} done at $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# Issue 32 item 5: a 32 GiB soak on the H200. PoRep C2 and SnapDeals 32 GiB mixed for
# $DURATION (20m), a WinningPoSt every minute, both SRSs resident on the card, the daemon's
# default config (its self-check on every proof, TIMING-ONLY refused) and INSECURE parameters
# of the real circuits (`cuzk gen params`): every proof is checked by filecoin-proofs'
# verifier in the daemon and on the client (`--verify`). The requests are a synthetic sparse
# sector's: the proofs verify, but prove a sector that was never sealed.
#
# `soak.sh start` (a fresh machine): parameters (porep-32g on the disk, snap-32g in /dev/shm:
#   the 64 GiB disk holds one such file; winning-32g), the requests, the daemon with the three
#   preloaded (budget $BUDGET, 84GiB: the /dev/shm file's 32 GiB stay outside it), then
#   `cuzk bench soak`, in its own session logging to /tmp/soak.log; returns at once. LOADWAIT=S
#   waits S seconds (not 400) for the preloads before the soak starts.
# `soak.sh wait [SECS]`: prints what the log gained since the last call, as it grows, until the
#   run ends or SECS (540) pass. Call
#   it back to back: the machine keeps its files and the run for 30 s after a call.
set -uo pipefail
. "$(dirname "$0")/common.sh"
LOG=/tmp/soak.log
# No compiled cache: porep-32g's 7.4 GB and snap-32g's 4.5 GB would not fit the disk beside the
# parameters (the compiles run in memory at the load).
export PARAMS=/tmp/ps TIMING_ONLY=false COMPILED_CACHE=false BUDGET=${BUDGET:-84GiB}
# every partition's phases in the daemon's log (`phases` at the end)
export RUST_LOG=${RUST_LOG:-info,cuzk_cuda=debug}

# metrics TAG: the daemon's /metrics, and the lines of every series the Grafana dashboard in
# deploy/ queries (histograms by their count and sum).
metrics() {
  local f=/tmp/metrics-$1.txt m
  curl -s http://127.0.0.1:9464/metrics > $f 2>/dev/null ||
    python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9464/metrics").read().decode())' > $f
  echo "== /metrics ($1): $(wc -l < $f) lines; the dashboard's series:"
  for m in $(grep -o 'cuzk_[a-z_]*' deploy/grafana-cuzk.json | sort -u); do
    case $m in
    *_bucket) grep -E "^${m%_bucket}_(count|sum)" $f ;;
    *) grep -E "^$m(\{| )" $f ;;
    esac
  done | grep -vE "WINDOW_POST|SYNTHETIC" | head -60
}

run() {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; free -g | head -2; df -h /tmp /dev/shm | tail -2
  mkdir -p $PARAMS /dev/shm/ps /tmp/pw
  echo "== parameters, porep-32g and snap-32g side by side ($(( $(date +%s) - T0 )) s in)"
  ( time $D/cuzk gen params --circuit porep-32g --out $PARAMS --seed 32 ) > /tmp/gen-porep.log 2>&1 &
  ( time $D/cuzk gen params --circuit snap-32g --out /dev/shm/ps --seed 32 ) > /tmp/gen-snap.log 2>&1 &
  # beside them (snap-32g's one-thread compile is the critical path): WinningPoSt's
  # parameters (in a folder of their own: each `gen params` rewrites its folder's INSECURE
  # note at the end) and the requests
  ( time $D/cuzk gen params --circuit winning-32g --out /tmp/pw --seed 32 ) > /tmp/gen-winning.log 2>&1 &
  ( $D/cuzk gen testdata --synthetic-sector --sector-size 32GiB --out /tmp/s32 2>&1 | grep -v "^NOTE" ) > /tmp/gen-testdata.log &
  wait
  for c in porep snap winning; do echo "-- $c"; grep -E "compiled|shape|setup:|wrote|^real|rror" /tmp/gen-$c.log; done
  for f in /dev/shm/ps/v28-* /tmp/pw/v28-*; do ln -sf "$f" $PARAMS/; done
  ls -la $PARAMS; df -h /tmp /dev/shm | tail -2; free -g | head -2
  cat /tmp/gen-testdata.log
  # LOADWAIT (400) seconds for the preloads; a short wait starts the soak while they run (its
  # first requests wait for their SRS, and the rows show when each kind's proofs begin).
  start_daemon "porep-32g snap-32g winning-32g" $(( $(date +%s) - T0 + ${LOADWAIT:-400} ))
  grep -E "WARN|ERROR|compiled|SRS loaded|resident|budget" /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-240 | tail -12
  echo "== status before ($(( $(date +%s) - T0 )) s in)"; $D/cuzk status 2>&1; vmhwm
  metrics before
  gpu_sample soak
  echo "== soak ($(( $(date +%s) - T0 )) s in)"
  FIL_PROOFS_PARAMETER_CACHE=$PARAMS $D/cuzk bench soak -i /tmp/s32/manifest.json \
    --load porep=${POREP:-2} --load snap=${SNAP:-1} --every winning=60s \
    --duration ${DURATION:-20m} --verify 2>&1 | tee /tmp/bench-soak.log
  echo "soak rc=${PIPESTATUS[0]}"
  gpu_stop; smi_summary /tmp/smi-soak.csv
  echo "== status after ($(( $(date +%s) - T0 )) s in)"; $D/cuzk status 2>&1; vmhwm
  metrics after
  grep -cE " ERROR " /tmp/daemon.log | sed 's/^/daemon ERROR lines: /'
  echo "== the 2^27 partitions' phases (PoRep and SnapDeals together; H MSM > 100 ms)"; phases /tmp/daemon.log 100
  grep -E "evict|self-check|verif" /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-240 | tail -6
  pkill -x cuzk
  echo "== soak done at $(( $(date +%s) - T0 )) s"
}

case "${1:-}" in
start)
  detach $LOG /tmp/sout $0
  ;;
run-inner)
  run
  ;;
wait)
  follow $LOG "== soak done" ${2:-540}
  cp -f $LOG /tmp/daemon.log /tmp/bench-soak.log /tmp/metrics-*.txt $OUT/ 2>/dev/null; true
  ;;
*) echo "usage: soak.sh start|wait [SECS]" >&2; exit 2 ;;
esac

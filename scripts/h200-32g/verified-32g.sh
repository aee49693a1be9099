#!/usr/bin/env bash
# Phase V (issue 28: verified at real size). INSECURE parameters of the real 32 GiB circuits
# made by `cuzk gen params` (points on the GPU), requests of a synthetic sparse sector, the
# daemon with its self-check on (no timing-only allowance), and `cuzk selftest`: filecoin-proofs'
# verifier on every proof. The proofs VERIFY (under these insecure keys); they prove a sector
# that was never sealed.
#
# `verified-32g.sh start` (a fresh machine): `setup_points` (the GPU's setup points against the CPU's),
#   then the run below in its own session, logging to /tmp/v.log; returns at once.
# `verified-32g.sh wait [SECS]`: prints the log as it grows, until the run ends or SECS (540) pass.
#   Call it back to back (the machine keeps its files and the run for 30 s after a call).
# The run, phase by phase ($PHASES, default "porep nocheck snap wpost"; the disk holds one
# large parameter file, so snap and wpost delete the last one's first):
#   porep:   porep-32g parameters, the daemon with porep-32g preloaded, `cuzk selftest` PoRep,
#            PoRep C2 c=2 j=4 (client-verified), winning-32g parameters and `selftest` WinningPoSt;
#   nocheck: the same daemon restarted with `[pipeline] self_verify = false`, c=2 j=4 again
#            (the self-check's cost, same parameters and requests);
#   snap:    snap-32g parameters, the daemon, `selftest` SnapDeals (16 partitions);
#   wpost:   wpost-32g parameters, the daemon, `selftest` WindowPoSt (2,349 sectors);
#   porep64: porep-64g parameters (47.6 GB: the disk holds them once the others are gone),
#            the daemon, `selftest` PoRep 64 GiB;
#            then the daemon restarted: porep-64g's compiled circuit read from the cache;
#   sppark:  porep-32g parameters (unless there), the daemon (default: queued MSMs) c=2 j=4,
#            then restarted with `[gpu] queued_msm = false` (sppark's own MSMs), c=2 j=4
#            again: the two side by side.
# POINTS=0 skips `setup_points` at the start. HOST_MSM=1 runs, beside the first parameters'
# making, `gpu_vs_cpu queued_and_sorted` at 2^27 − 1 points (sppark's, the queued and the sorted
# MSMs against the host's sum; issue 30) and prints its verdict at the end. DEVICE_ABC (when
# set) goes into `[srs] device_abc`; "auto" makes it false on a card under 100 GiB (an H100:
# the SRS then stays resident, which the sorted MSM needs). Each batch prints the partitions'
# H-MSM times from the daemon's debug log (RUST_LOG=info,cuzk_cuda=debug) and whether the SRS
# was streamed.
set -uo pipefail
. "$(dirname "$0")/common.sh"
LOG=/tmp/v.log
P=/tmp/pv

# daemon_up CIRCUIT [EXTRA_TOML]: the daemon on $P with CIRCUIT preloaded, default config
# (self-check on, TIMING-ONLY refused); waits for the load (up to 400 s).
daemon_up() {
  pkill -x cuzk; sleep 2
  printf '[srs]\nparams_dir = "%s"\npreload = ["%s"]\n%b%b' "$P" "$1" \
    "${DEVICE_ABC:+device_abc = $DEVICE_ABC\n}" "${2:-}" > /tmp/cuzk.toml
  local t=$(date +%s)
  RUST_LOG=info,cuzk_cuda=debug setsid nohup $D/cuzk daemon --config /tmp/cuzk.toml --listen $SOCK > /tmp/daemon.log 2>&1 < /dev/null &
  while ! grep -q "SRS loaded\|preload failed\| ERROR " /tmp/daemon.log 2>/dev/null && [ $(( $(date +%s) - t )) -lt 400 ]; do sleep 2; done
  echo "daemon: $1 loaded in $(( $(date +%s) - t )) s"
  grep -E "WARN|ERROR|compiled|SRS loaded" /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-240 | tail -4
  vmhwm
}

# params CIRCUIT: its INSECURE parameters into $P, timed (the command prints its phases and
# its peak RSS).
params() {
  echo "== $1 parameters ($(( $(date +%s) - T0 )) s in)"
  ( time $D/cuzk gen params --circuit $1 --out $P --seed 28 ) > /tmp/gen-$1.log 2>&1
  echo "rc=$?"; grep -E "points made|compiled|shape|setup:|wrote|^real|rror" /tmp/gen-$1.log
  df -h /tmp | tail -1
}

selftest() {
  echo "== selftest $1 ($(( $(date +%s) - T0 )) s in)"
  $D/cuzk selftest --params $P --kinds $1 --sector-size 32GiB --out /tmp/st 2>&1 | grep -v "^NOTE"
  echo "selftest rc=${PIPESTATUS[0]}"
}

batch() {
  echo "== PoRep C2 c=2 j=4, $1 ($(( $(date +%s) - T0 )) s in)"
  gpu_sample $1
  FIL_PROOFS_PARAMETER_CACHE=$P $D/cuzk bench batch -k porep -i /tmp/s32/manifest.json -c 2 -j 4 --verify 2>&1 | tee /tmp/bench-$1.log | tail -16
  gpu_stop; smi_summary /tmp/smi-$1.csv
  msm_h_summary
}

# msm_h_summary: the partitions' H-MSM times and SRS tiers from the daemon's debug log.
msm_h_summary() {
  sed 's/\x1b\[[0-9;]*m//g' /tmp/daemon.log | grep "cuda start" |
    awk '{ for (i = 1; i <= NF; i++) { if ($i == "msm_h_ms:") { v = $(i+1) + 0; s += v; n++; if (v > mx) mx = v; if (!mn || v < mn) mn = v }
           if ($i == "streamed:") st[$(i+1)]++ } }
         END { if (n) printf "H MSM over %d partitions: mean %.1f ms, min %.1f, max %.1f; streamed:", n, s/n, mn, mx; for (k in st) printf " %s %d", k, st[k]; print "" }'
}

# host_done: waits for HOST_MSM's test (it shares the card) and prints its verdict, once.
host_done() {
  [ -f /tmp/host.pid ] || return 0
  echo "== gpu_vs_cpu queued_and_sorted at 2^27 - 1 ($(( $(date +%s) - T0 )) s in)"
  while kill -0 $(cat /tmp/host.pid) 2>/dev/null; do sleep 2; done
  grep -E "^test |test result|^real|points|panicked|left|right" /tmp/host.log | tail -12
  rm -f /tmp/host.pid
}

run() {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; free -g | head -2; df -h /tmp | tail -1
  mkdir -p $P /tmp/st
  if [ "${DEVICE_ABC:-}" = auto ]; then
    local mib; mib=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1)
    if [ "${mib:-0}" -lt 100000 ]; then DEVICE_ABC=false; else DEVICE_ABC=true; fi
    echo "DEVICE_ABC=$DEVICE_ABC (${mib} MiB)"
  fi
  if [ -n "${HOST_MSM:-}" ]; then
    ( time CUZK_TEST_MSM_SIZES=134217727 $D/gpu_vs_cpu queued_and_sorted --test-threads 1 --nocapture ) > /tmp/host.log 2>&1 &
    echo $! > /tmp/host.pid
  fi
  $D/cuzk gen testdata --synthetic-sector --sector-size 32GiB --out /tmp/s32 2>&1 | grep -v "^NOTE"
  for phase in ${PHASES:-porep nocheck snap wpost}; do
    case $phase in
    porep)
      params porep-32g
      host_done
      daemon_up porep-32g
      selftest porep
      batch check
      params winning-32g
      selftest winning
      ;;
    nocheck)
      daemon_up porep-32g '[pipeline]\nself_verify = false\n'
      batch nocheck
      ;;
    snap)
      rm -f $P/*.params; pkill -x cuzk
      params snap-32g
      daemon_up snap-32g
      selftest snap
      ;;
    wpost)
      rm -rf $P/*.params $P/cuzk-compiled; pkill -x cuzk
      params wpost-32g
      # Its parameters and compiled matrices (~10 GiB) would not both fit the disk.
      daemon_up wpost-32g 'compiled_cache = false\n'
      selftest wpost
      ;;
    porep64)
      rm -rf $P/*.params $P/cuzk-compiled; pkill -x cuzk
      params porep-64g
      daemon_up porep-64g
      echo "== selftest porep 64GiB ($(( $(date +%s) - T0 )) s in)"
      $D/cuzk selftest --params $P --kinds porep --sector-size 64GiB --out /tmp/st 2>&1 | grep -v "^NOTE"
      ls -la $P/cuzk-compiled; df -h /tmp | tail -1
      echo "== restart: the compiled circuit from the cache"
      daemon_up porep-64g
      ;;
    sppark)
      if [ ! -f $P/*82a357d2*.params ]; then
        rm -rf $P/*.params $P/cuzk-compiled; pkill -x cuzk
        params porep-32g
      fi
      daemon_up porep-32g
      batch queued
      daemon_up porep-32g '[gpu]\nqueued_msm = false\n'
      batch sppark
      ;;
    esac
  done
  $D/cuzk status 2>&1 | head -20
  pkill -x cuzk
  host_done
  echo "== v done at $(( $(date +%s) - T0 )) s"
}

case "${1:-}" in
start)
  T0=$(date +%s)
  [ "${POINTS:-1}" = 0 ] || {
  echo "== setup_points ($D)"
  ( time CUZK_TEST_SETUP_POINTS=10000000 $D/setup_points --test-threads 1 --nocapture ) > $OUT/setup_points.log 2>&1
  grep -E "^test |test result|^real|G1 x|G2 x|panicked|differs" $OUT/setup_points.log | tail -24
  grep -q "test result: ok" $OUT/setup_points.log || { echo "setup_points failed: not starting the run"; exit 1; }
  }
  rm -f $LOG $LOG.seen
  setsid nohup bash -c "OUT=/tmp/vout T0=$T0 PHASES='${PHASES:-}' HOST_MSM='${HOST_MSM:-}' DEVICE_ABC='${DEVICE_ABC:-}' $0 run-inner" > $LOG 2>&1 < /dev/null &
  echo "run started"
  ;;
run-inner)
  mkdir -p /tmp/vout; OUT=/tmp/vout run
  ;;
wait)
  follow $LOG "== v done" ${2:-540}
  cp -f /tmp/v.log /tmp/daemon.log $OUT/ 2>/dev/null
  grep -q "== v done" $LOG 2>/dev/null && cp -f /tmp/st/*.json $OUT/ 2>/dev/null; true
  ;;
*) echo "usage: verified-32g.sh start|wait [SECS]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# An 80 GB card (H100 80GB) and a 32 GiB PoRep: the witness bound in the VRAM plan. INSECURE
# porep-32g parameters of the real circuit (`cuzk gen params`), the synthetic-sector requests,
# and the daemon's default config (self-check on, TIMING-ONLY refused, a/b/c on the device,
# the compiled cache), for two binaries in turn: `cuzk` (the one under test) and, unless
# OLD=0, `cuzk-old` (the reference, the binary before), both in $CUZK_BIN_DIR. For each: the
# preload (how the SRS and the matrices were placed, from the daemon's log), `cuzk status`,
# the daemon's RSS, then PoRep C2 c=2 j=4 with every proof verified on the client, the
# device's utilization sampled, the partitions' phases, and the RSS again. VRAM_BUDGET (e.g.
# 78GiB, an H100 80GB's) sets `[gpu] vram_budget`: a larger card planned as an 80 GB one.
#
# `card80.sh start`: the run in its own session, logging to /tmp/c80.log; returns at once.
# `card80.sh wait [SECS]`: prints the log as it grows until the run ends or SECS (540) pass.
#   Call it back to back (the machine keeps its files and the run for 30 s after a call).
set -uo pipefail
. "$(dirname "$0")/common.sh"
LOG=/tmp/c80.log
P=/tmp/pv

# one BIN TAG: the daemon BIN with porep-32g preloaded, then the batch.
one() {
  local bin=$1 tag=$2 t
  pkill -x cuzk; sleep 2
  printf '[srs]\nparams_dir = "%s"\npreload = ["porep-32g"]\n' "$P" > /tmp/cuzk.toml
  [ -n "${VRAM_BUDGET:-}" ] && printf '[gpu]\nvram_budget = "%s"\n' "$VRAM_BUDGET" >> /tmp/cuzk.toml
  echo "== $tag: daemon $bin ($(( $(date +%s) - T0 )) s in)"
  t=$(date +%s)
  RUST_LOG=info,cuzk_cuda=debug setsid nohup $D/$bin daemon --config /tmp/cuzk.toml --listen $SOCK > /tmp/daemon-$tag.log 2>&1 < /dev/null &
  while ! grep -q "SRS loaded\|preload failed\| ERROR " /tmp/daemon-$tag.log 2>/dev/null && [ $(( $(date +%s) - t )) -lt 400 ]; do sleep 2; done
  echo "loaded in $(( $(date +%s) - t )) s"
  sed 's/\x1b\[[0-9;]*m//g' /tmp/daemon-$tag.log |
    grep -E "cannot hold|streamed|again|resident|host copy|matrices|compiled|SRS loaded|WARN|ERROR" | cut -c1-260 | tail -12
  $D/$bin status 2>&1 | head -24
  echo "rss after the load: $(vmhwm $bin)"
  echo "== $tag: PoRep C2 c=2 j=4 ($(( $(date +%s) - T0 )) s in)"
  gpu_sample $tag
  FIL_PROOFS_PARAMETER_CACHE=$P timeout ${BATCH_LIMIT:-420} $D/$bin bench batch -k porep -i /tmp/s32/manifest.json -c 2 -j 4 --verify 2>&1 | tee /tmp/bench-$tag.log | tail -14
  gpu_stop; smi_summary /tmp/smi-$tag.csv
  echo "rss after the batch: $(vmhwm $bin)"
  sed 's/\x1b\[[0-9;]*m//g' /tmp/daemon-$tag.log | grep "cuda start" | grep -oE "streamed: [a-z]+|deferred: [a-z]+" | sort | uniq -c
  phases /tmp/daemon-$tag.log 100
  grep -cE " ERROR " /tmp/daemon-$tag.log | sed 's/^/daemon ERROR lines: /'
  cp -f /tmp/daemon-$tag.log $OUT/ 2>/dev/null
}

run() {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; free -g | head -2; df -h /tmp | tail -1
  mkdir -p $P
  $D/cuzk gen testdata --synthetic-sector --sector-size 32GiB --out /tmp/s32 2>&1 | grep -v "^NOTE"
  echo "== porep-32g INSECURE parameters ($(( $(date +%s) - T0 )) s in)"
  ( time $D/cuzk gen params --circuit porep-32g --out $P --seed 28 ) > /tmp/gen.log 2>&1
  echo "rc=$?"; grep -E "compiled|setup:|wrote|^real|rror" /tmp/gen.log
  one cuzk new
  [ "${OLD:-1}" = 0 ] || one cuzk-old old
  pkill -x cuzk
  echo "== c80 done at $(( $(date +%s) - T0 )) s"
}

case "${1:-}" in
start) detach $LOG /tmp/c80out $0 ;;
run-inner) run ;;
wait)
  follow $LOG "== c80 done" ${2:-540}
  cp -f /tmp/bench-*.log $OUT/ 2>/dev/null; true
  ;;
*) echo "usage: card80.sh start|wait [SECS]" >&2; exit 2 ;;
esac

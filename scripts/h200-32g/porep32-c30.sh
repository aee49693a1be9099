#!/usr/bin/env bash
# Phase C: c=30, every job at once, DEADLINE (default 600 s); a WinningPoSt 32 GiB sent 240 s
# in. The run outlives one 10-minute call: `porep32-c30.sh` starts it in its own session and waits
# while the call allows; `porep32-c30.sh collect` (the next call) waits for its end and saves the logs.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
M=/tmp/t32/manifest.json
case "${1:-start}" in
run)
  gpu_sample c30
  ( $D/cuzk bench batch -k porep -i $M -c 30 -j 30 --timeline /tmp/c30.svg --deadline ${DEADLINE:-600} > /tmp/bench-c30.log 2>&1 ) &
  B=$!
  sleep 240
  echo "== WinningPoSt under the c=30 load ($(( $(date +%s) - T0 )) s in)"
  $D/cuzk bench single -k winning -i $M 2>&1 | tee /tmp/bench-winning.log | tail -14
  $D/cuzk status 2>&1 | head -40
  wait $B
  gpu_stop; smi_summary /tmp/smi-c30.csv
  tail -30 /tmp/bench-c30.log; vmhwm
  $D/cuzk status 2>&1 | head -40
  grep -cE "OOM|Killed" /tmp/daemon.log; dmesg 2>/dev/null | grep -i -E "oom|killed process" | tail -3
  echo "== phase C done at $(( $(date +%s) - T0 )) s"
  touch /tmp/phase-c.done
  ;;
start)
  rm -f /tmp/phase-c.done
  setsid nohup bash "$0" run > /tmp/phase-c.log 2>&1 < /dev/null &
  while [ ! -e /tmp/phase-c.done ] && [ $(( $(date +%s) - T0 )) -lt ${WAIT:-575} ]; do sleep 5; done
  cat /tmp/phase-c.log; cp -f /tmp/phase-c.log $OUT/ 2>/dev/null; save
  ;;
collect)
  while [ ! -e /tmp/phase-c.done ] && [ $(( $(date +%s) - T0 )) -lt ${WAIT:-575} ]; do sleep 5; done
  cat /tmp/phase-c.log; cp -f /tmp/phase-c.log $OUT/ 2>/dev/null; save
  ;;
esac

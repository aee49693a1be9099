#!/usr/bin/env bash
# Phase S (issue 31 item 1: cuzk.cu split by stage), one call on a fresh machine: the GPU
# tests of the new binaries, then real 8 MiB PoRep at c=16 (every proof verified by the
# client) with the previous binary and the new one, alternately, in the same call.
# Carried compressed (two daemons and two test binaries exceed the carry limit):
#   .device/s/{cuzk-old,cuzk,gpu_vs_cpu,device_abc}.xz   (xz -T0 of stripped binaries)
# ROUNDS (default 2) old/new pairs at J (default 320) proofs each.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
mkdir -p /tmp/sbin
for f in .device/s/*.xz; do xz -dc "$f" > /tmp/sbin/$(basename "$f" .xz); chmod +x /tmp/sbin/$(basename "$f" .xz); done
ls -la /tmp/sbin
echo "== gpu_vs_cpu ($(( $(date +%s) - T0 )) s in)"
( time /tmp/sbin/gpu_vs_cpu --test-threads 1 ) > $OUT/gpu_vs_cpu.log 2>&1
grep -E "^test |test result|^real|panicked" $OUT/gpu_vs_cpu.log | tail -16
echo "== device_abc ($(( $(date +%s) - T0 )) s in)"
( time /tmp/sbin/device_abc --test-threads 1 ) > $OUT/device_abc.log 2>&1
grep -E "^test |test result|^real|panicked" $OUT/device_abc.log | tail -10
mkdir -p /tmp/old /tmp/new
cp /tmp/sbin/cuzk-old /tmp/old/cuzk; cp /tmp/sbin/cuzk /tmp/new/cuzk
for r in $(seq 1 ${ROUNDS:-2}); do
  for b in old new; do
    echo "== round $r, $b binary ($(( $(date +%s) - T0 )) s in)"
    CUZK_BIN_DIR=/tmp/$b MODES=device J=${J:-320} bash "$(dirname "$0")/real-8m.sh" 2>&1 | grep -E "testdata|proofs:|throughput|busy|nvidia-smi"
  done
done
echo "== phase S done at $(( $(date +%s) - T0 )) s"

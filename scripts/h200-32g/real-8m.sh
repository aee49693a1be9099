#!/usr/bin/env bash
# Phase K (issue 13), one call on a fresh machine: real 8 MiB test data and INSECURE parameters
# (`cuzk gen testdata --sector-size 8MiB`, kept in /tmp/t8 for the next call), then for MODES (default "device host") the daemon
# with porep-8m preloaded and `[srs] device_abc` on (a/b/c made on the GPU from the compiled
# matrices in VRAM) or off (made on the host and uploaded), each running PoRep C2 at c=16
# j=$J (32) with every proof verified by the client (filecoin-proofs), nvidia-smi sampled.
# EARLY (e.g. "false true") repeats each mode with `[gpu] early_batch_additions` set so, and
# QUEUED (e.g. "false true") within that with `[gpu] queued_msm` set so.
# Real circuits, real (insecure test) parameters: the proofs verify.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
J=${J:-32}
if [ ! -e /tmp/t8/manifest.json ]; then
  ( time timeout 240 $D/cuzk gen testdata --sector-size 8MiB --out /tmp/t8 ) > $OUT/gen-8m.log 2>&1
  echo "testdata rc=$? at $(( $(date +%s) - T0 )) s"; tail -3 $OUT/gen-8m.log
fi
export FIL_PROOFS_PARAMETER_CACHE=/tmp/t8
for mode in ${MODES:-device host}; do
 for early in ${EARLY:-default}; do
 for queued in ${QUEUED:-default}; do
  abc=true; [ "$mode" = host ] && abc=false
  tag=$mode; [ "$early" = default ] || tag=$tag-early-$early
  [ "$queued" = default ] || tag=$tag-queued-$queued
  cat > /tmp/cuzk.toml <<EOT
[srs]
params_dir = "/tmp/t8"
preload = ["porep-8m"]
device_abc = $abc
EOT
  if [ "$early" != default ] || [ "$queued" != default ]; then
    echo '[gpu]' >> /tmp/cuzk.toml
    [ "$early" = default ] || echo "early_batch_additions = $early" >> /tmp/cuzk.toml
    [ "$queued" = default ] || echo "queued_msm = $queued" >> /tmp/cuzk.toml
  fi
  echo "== $tag: daemon start ($(( $(date +%s) - T0 )) s in)"
  setsid nohup $D/cuzk daemon --config /tmp/cuzk.toml --listen $SOCK > /tmp/daemon-$tag.log 2>&1 < /dev/null &
  for _ in $(seq 1 60); do grep -q "SRS loaded" /tmp/daemon-$tag.log 2>/dev/null && break; sleep 1; done
  gpu_sample k-$tag
  $D/cuzk bench batch -k porep -i /tmp/t8/manifest.json -c 16 -j $J --verify --timeline /tmp/k-$tag.svg 2>&1 | tee /tmp/bench-k-$tag.log | grep -E "proofs:|throughput|busy|peak|verified|error" | head -12
  gpu_stop; smi_summary /tmp/smi-k-$tag.csv
  $D/cuzk status 2>&1 | grep -E "per partition|SRS:|porep-8m"
  pkill -x cuzk; sleep 3
  cp -f /tmp/daemon-$tag.log $OUT/ 2>/dev/null
 done
 done
done
save
echo "== phase K done at $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# Phase K (issue 13), one call on a fresh machine: real 8 MiB test data and INSECURE parameters
# (`cuzk gen testdata --sector-size 8MiB`, kept in /tmp/t8 for the next call), then for MODES (default "device host") the daemon
# with porep-8m preloaded and `[srs] device_abc` on (a/b/c made on the GPU from the compiled
# matrices in VRAM) or off (made on the host and uploaded), each running PoRep C2 at c=16
# j=$J (32) with every proof verified by the client (filecoin-proofs), nvidia-smi sampled.
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
  abc=true; [ "$mode" = host ] && abc=false
  cat > /tmp/cuzk.toml <<EOT
[srs]
params_dir = "/tmp/t8"
preload = ["porep-8m"]
device_abc = $abc
EOT
  echo "== $mode: daemon start ($(( $(date +%s) - T0 )) s in)"
  setsid nohup $D/cuzk daemon --config /tmp/cuzk.toml --listen $SOCK > /tmp/daemon-$mode.log 2>&1 < /dev/null &
  for _ in $(seq 1 60); do grep -q "SRS loaded" /tmp/daemon-$mode.log 2>/dev/null && break; sleep 1; done
  gpu_sample k-$mode
  $D/cuzk bench batch -k porep -i /tmp/t8/manifest.json -c 16 -j $J --verify --timeline /tmp/k-$mode.svg 2>&1 | tee /tmp/bench-k-$mode.log | grep -E "proofs:|throughput|busy|peak|verified|error" | head -12
  gpu_stop; smi_summary /tmp/smi-k-$mode.csv
  $D/cuzk status 2>&1 | grep -E "per partition|SRS:|porep-8m"
  pkill -x cuzk; sleep 3
  cp -f /tmp/daemon-$mode.log $OUT/ 2>/dev/null
done
save
echo "== phase K done at $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# Phase O (issue 13, the 8 MiB busy bar), one call on a fresh machine: where the GPU idles
# inside the exclusive phase. Real 8 MiB test data (as k.sh), the daemon with porep-8m and
# device a/b/c under Nsight Systems (`nsys`, CUDA trace only, from second $DELAY (15) for
# $DUR (20) s), PoRep C2 c=16 j=$J (320) with every proof verified, then the GPU trace's busy
# fraction, its idle gaps by size and the kernel transitions holding the most idle time
# (`gaps.py`), and the CUDA API calls by total time.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NSYS:-none}"
[ -n "$NSYS" ] || exit 1
if [ ! -e /tmp/t8/manifest.json ]; then
  timeout 240 $D/cuzk gen testdata --sector-size 8MiB --out /tmp/t8 > $OUT/gen-8m.log 2>&1
  echo "testdata rc=$? at $(( $(date +%s) - T0 )) s"
fi
export FIL_PROOFS_PARAMETER_CACHE=/tmp/t8
printf '[srs]\nparams_dir = "/tmp/t8"\npreload = ["porep-8m"]\ndevice_abc = true\n' > /tmp/cuzk.toml
setsid nohup $NSYS profile --trace=cuda --sample=none --cpuctxsw=none --delay=${DELAY:-15} --duration=${DUR:-20} -o /tmp/prof -f true \
  $D/cuzk daemon --config /tmp/cuzk.toml --listen $SOCK > /tmp/daemon-o.log 2>&1 < /dev/null &
for _ in $(seq 1 90); do grep -q "SRS loaded" /tmp/daemon-o.log 2>/dev/null && break; sleep 1; done
echo "== loaded at $(( $(date +%s) - T0 )) s"
$D/cuzk bench batch -k porep -i /tmp/t8/manifest.json -c 16 -j ${J:-320} --verify --deadline 90 2>&1 | grep -E "proofs:|throughput|busy" | head -5
pkill -x cuzk
# nsys writes the report once the daemon is gone (or its duration ended).
for _ in $(seq 1 150); do pgrep -x nsys > /dev/null || break; sleep 1; done
echo "== report at $(( $(date +%s) - T0 )) s"; ls -la /tmp/prof.* 2>&1
$NSYS stats --report cuda_gpu_trace --format csv -o /tmp/trace /tmp/prof.nsys-rep > /dev/null 2>&1
python3 "$(dirname "$0")/gaps.py" /tmp/trace_cuda_gpu_trace.csv
$NSYS stats --report cuda_api_sum /tmp/prof.nsys-rep 2>&1 | head -24
$NSYS stats --report cuda_gpu_kern_sum /tmp/prof.nsys-rep 2>&1 | head -24 | cut -c1-200
echo "== phase O done at $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# Phase A: GPU correctness (incl. the released-SRS path), the 32 GiB TIMING-ONLY parameters and
# requests, then the daemon started (setsid) with porep-32g preloaded.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; free -g | head -2; df -h /tmp | tail -1
echo "cgroup: $(cat /proc/self/cgroup) controllers: $(cat /sys/fs/cgroup/cgroup.controllers 2>&1) pid1: $(cat /proc/1/comm) systemd-run: $(command -v systemd-run)"; mount | grep cgroup
echo "== gpu_vs_cpu"
$D/gpu_vs_cpu --test-threads 1 2>&1 | tee $OUT/gpu_vs_cpu.log | grep -E "^test |test result"
echo "== gen timing-params porep-32g ($(( $(date +%s) - T0 )) s in)"
( time timeout 400 $D/cuzk gen timing-params --circuit porep-32g --out /tmp/p32 ) > $OUT/gen-porep.log 2>&1; echo rc=$?
tail -15 $OUT/gen-porep.log
echo "== gen timing-params winning-32g"
( time timeout 60 $D/cuzk gen timing-params --circuit winning-32g --out /tmp/p32 ) > $OUT/gen-winning.log 2>&1; echo rc=$?; tail -4 $OUT/gen-winning.log
echo "== gen testdata 32GiB --timing-only"
( time timeout 120 $D/cuzk gen testdata --sector-size 32GiB --timing-only --out /tmp/t32 ) > $OUT/gen-testdata.log 2>&1; echo rc=$?; tail -6 $OUT/gen-testdata.log
ls -la /tmp/p32 /tmp/t32 | head -30; df -h /tmp | tail -1; free -g | head -2
start_daemon porep-32g 560
sleep 1
grep -E "WARN|ERROR|SRS|compiled|resident|budget|listening" /tmp/daemon.log | cut -c1-400 | tail -20
$D/cuzk status 2>&1 | head -30; vmhwm
save
echo "== phase A done at $(( $(date +%s) - T0 )) s"

#!/usr/bin/env bash
# Phase E: the daemon restarted inside a cgroup v2 with memory.max = ${CGROUP_MAX:-64G} (its
# budget derived from the cgroup), porep-32g preloaded, then PoRep C2 at c=${C:-1} j=${J:-1}.
# Reports the cgroup's memory.peak and memory.events (oom / oom_kill counters).
set -uo pipefail
. "$(dirname "$0")/common.sh"
pkill -x cuzk; sleep 3
CG=/sys/fs/cgroup/cuzk-${CGROUP_MAX:-64G}
mkdir -p $CG
echo "+memory" > /sys/fs/cgroup/cgroup.subtree_control
echo ${CGROUP_MAX:-64G} > $CG/memory.max; echo "memory.max $(cat $CG/memory.max)"
T0=$(date +%s)
setsid nohup bash -c "echo \$\$ > $CG/cgroup.procs; exec $D/cuzk daemon --config /tmp/cuzk.toml --listen $SOCK --metrics-listen 127.0.0.1:9464" > /tmp/daemon-cg.log 2>&1 < /dev/null &
sleep 5
P=$(pgrep -x cuzk | head -1); echo "daemon cgroup: $(cat /proc/$P/cgroup)"
grep -m1 budget /tmp/daemon-cg.log | cut -c1-250
while ! grep -q "SRS loaded\|rror" /tmp/daemon-cg.log && [ $(( $(date +%s) - T0 )) -lt 300 ]; do sleep 2; done
grep -E "SRS|compiled|WARN|ERROR" /tmp/daemon-cg.log | cut -c1-250 | tail -5
$D/cuzk status | head -8
$D/cuzk bench batch -k porep -i /tmp/t32/manifest.json -c ${C:-1} -j ${J:-1} --timeline /tmp/cg.svg --deadline $(( 560 - ($(date +%s) - T0) )) 2>&1 | tail -14
grep -E "VmHWM|VmRSS" /proc/$P/status
echo "cgroup memory.peak $(cat $CG/memory.peak) events: $(cat $CG/memory.events | tr '\n' ' ')"
cp /tmp/daemon-cg.log /tmp/cg.svg $OUT/

#!/usr/bin/env bash
# Issue 29 item 5: NI-PoRep 32 GiB (126 partitions and their SnarkPack aggregate) inside a cgroup
# v2 with memory.max 8G. TIMING-ONLY parameters and requests, and an INSECURE aggregation SRS:
# the proofs and the aggregate do not verify. A fresh machine; one run in its own session,
# polled across calls (the machine may be taken back between calls):
#   OUT=/tmp/ni-out setsid nohup bash scripts/h200-32g/ni-porep32.sh > /tmp/ni.log 2>&1 &
#   then, call after call: tail -40 /tmp/ni.log
# Steps: porep-32g TIMING-ONLY parameters (~3.5 min); the INSECURE aggregation SRS in the
# parameter directory (`cuzk gen aggregation-srs`); the 32 GiB requests with `porep-ni` (its C1
# output is 620 MiB, more than the protocol's 256 MiB message: the daemon's `[server]
# max_message_size` and the client's `--max-message-size` are 1 GiB here, and the request buffer
# 1.5 GiB, since a message is reserved twice over while it arrives); the daemon with porep-32g
# preloaded inside the 8G cgroup (budget derived from it); `bench batch -k porep-ni` c=1 j=$NIJ
# (2): s/sector, and the aggregate's time from the daemon's "proof finished" lines; VmHWM,
# memory.peak and memory.events; then PoRep C2 c=2 j=4 in the same daemon, the interactive rate
# beside it.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
OUT=${OUT:-/tmp/ni-out}; mkdir -p "$OUT"
NIJ=${NIJ:-2}
# PREPPED=1: the parameters and requests (with NI) are in /tmp/p32 and /tmp/t32 already.
[ -z "${PREPPED:-}" ] && NO_TESTS=1 NI=1 prep_32g
echo "== aggregation SRS ($(( $(date +%s) - T0 )) s in): $($D/cuzk gen aggregation-srs --out /tmp/p32 2>/dev/null)"
ls -l /tmp/t32/*.json
CG=$(cgroup 8G)
echo "== daemon inside $CG ($(( $(date +%s) - T0 )) s in)"
DAEMON_CGROUP=$CG REQBUF=1536MiB MAXMSG=1GiB start_daemon porep-32g $(( $(date +%s) - T0 + 300 ))
grep -E "budget|request buffer|SRS loaded|WARN|ERROR" /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-300 | tail -6
echo "loaded: $(vmhwm)"
echo "== NI-PoRep c=1 j=$NIJ ($(( $(date +%s) - T0 )) s in)"
gpu_sample ni
$D/cuzk bench batch --max-message-size 1GiB -k porep-ni -i /tmp/t32/manifest.json -c 1 -j $NIJ --timeline /tmp/ni.svg --deadline 900 2>&1 | tee /tmp/bench-ni.log | tail -16
gpu_stop; smi_summary /tmp/smi-ni.csv
grep "proof finished" /tmp/daemon.log | sed 's/\x1b\[[0-9;]*m//g' | cut -c1-200
echo "after NI-PoRep: $(vmhwm)"; cg_report $CG
if [ -z "${PREPPED:-}" ]; then
  echo "== PoRep C2 c=2 j=4 ($(( $(date +%s) - T0 )) s in)"
  $D/cuzk bench batch -k porep -i /tmp/t32/manifest.json -c 2 -j 4 --deadline 300 2>&1 | tee /tmp/bench-c2.log | tail -12
  echo "end: $(vmhwm)"; cg_report $CG
fi
save; stop_daemon
echo "== done ($(( $(date +%s) - T0 )) s)"

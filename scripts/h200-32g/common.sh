# Shared by the phase scripts: the daemon runs in its own session between calls.
D=${CUZK_BIN_DIR:-.device}
# Gzipped binaries (carried so under the 64 MiB limit) are unpacked once into /tmp/cuzk-bin,
# outside the carried folder, which the next call's carry replaces while a run may still use
# them; an unchanged archive is not unpacked again (its binary may be running).
if ls $D/*.gz > /dev/null 2>&1; then
  mkdir -p /tmp/cuzk-bin
  for f in $D/*.gz; do
    b=/tmp/cuzk-bin/$(basename "$f" .gz) sum=$(md5sum < "$f")
    if [ "$(cat "$b.md5" 2>/dev/null)" != "$sum" ]; then
      gunzip -c "$f" > "$b.new" && chmod +x "$b.new" && mv -f "$b.new" "$b" && echo "$sum" > "$b.md5"
    fi
  done
  D=/tmp/cuzk-bin
fi
SOCK=unix:///tmp/cuzk.sock
export CUZK_ADDR=$SOCK
save() { cp -f /tmp/daemon.log $OUT/daemon.log 2>/dev/null; cp -f /tmp/*.svg $OUT/ 2>/dev/null; cp -f /tmp/bench-*.log $OUT/ 2>/dev/null; true; }
# vmhwm [NAME]: the VmHWM and VmRSS of the process NAME (cuzk).
vmhwm() { local p; p=$(pgrep -x "${1:-cuzk}" | head -1); [ -n "$p" ] && grep -E "VmHWM|VmRSS" /proc/$p/status | tr '\n' ' '; echo; }
gpu_sample() { nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 > /tmp/smi-$1.csv 2>/dev/null & echo $! > /tmp/smi.pid; }
gpu_stop() { kill $(cat /tmp/smi.pid) 2>/dev/null; cp -f /tmp/smi-*.csv $OUT/ 2>/dev/null; true; }
smi_summary() { awk -F', ' '{u[++n]=$2+0; s+=$2+0; if($2+0==0)z++} END {if(!n) exit; a=int(n/10)+1; b=n-int(n/10); for(i=a;i<=b;i++){m+=u[i]; k++} printf "nvidia-smi %s: %d samples, mean util %.1f%%, %d at 0%%; middle 80%%: %.1f%% (%d samples)\n", FILENAME, n, s/n, z, m/k, k}' "$1"; }
# sampled_batch TAG C J DEADLINE [EXTRA]: PoRep C2 at c=C j=J on the 32 GiB requests in
# /tmp/t32 until DEADLINE s, nvidia-smi sampled, and every 10 s the daemon's VmHWM/VmRSS, the
# output of the command EXTRA, and `cuzk status`'s memory lines into /tmp/bench-TAG-status.log.
sampled_batch() {
  local tag=$1 c=$2 j=$3 left=$4 extra=${5:-true} sp
  gpu_sample $tag
  ( while sleep 10; do echo "-- at $(( $(date +%s) - T0 )) s: $(vmhwm) $(eval "$extra")"; $D/cuzk status 2>&1 | grep -E "memory:|per partition|partitions:"; done ) > /tmp/bench-$tag-status.log 2>&1 &
  sp=$!
  $D/cuzk bench batch -k porep -i /tmp/t32/manifest.json -c $c -j $j --timeline /tmp/$tag.svg --deadline $left 2>&1 | tee /tmp/bench-$tag.log | tail -22
  kill $sp 2>/dev/null
  gpu_stop; smi_summary /tmp/smi-$tag.csv
}
# start_daemon "CIRCUIT..." LIMIT: writes /tmp/cuzk.toml (parameters in $PARAMS (/tmp/p32), each
# CIRCUIT preloaded, TIMING-ONLY allowed unless TIMING_ONLY=false, the compiled cache unless
# COMPILED_CACHE=false, the memory budget $BUDGET, `[memory] request_buffer` $REQBUF,
# `[server] max_message_size` $MAXMSG and `[pipeline]
# synthesis_concurrency` $SYNTH and `[gpu] sorted_msm` $SORTED when set, `[srs] device_abc` $DEVICE_ABC (true)), starts the daemon in its
# own session (inside the cgroup $DAEMON_CGROUP when set) and waits for every preload until
# LIMIT seconds after $T0.
start_daemon() {
  local c list="" n=0
  for c in $1; do list="${list:+$list, }\"$c\""; n=$((n + 1)); done
  cat > /tmp/cuzk.toml <<EOT
[srs]
params_dir = "${PARAMS:-/tmp/p32}"
preload = [$list]
device_abc = ${DEVICE_ABC:-true}
compiled_cache = ${COMPILED_CACHE:-true}
[allow]
timing_only = ${TIMING_ONLY:-true}
EOT
  if [ -n "${BUDGET:-}${REQBUF:-}" ]; then
    echo "[memory]" >> /tmp/cuzk.toml
    [ -n "${BUDGET:-}" ] && printf 'budget = "%s"\n' "$BUDGET" >> /tmp/cuzk.toml
    [ -n "${REQBUF:-}" ] && printf 'request_buffer = "%s"\n' "$REQBUF" >> /tmp/cuzk.toml
  fi
  if [ -n "${MAXMSG:-}" ]; then printf '[server]\nmax_message_size = "%s"\n' "$MAXMSG" >> /tmp/cuzk.toml; fi
  if [ -n "${SYNTH:-}" ]; then printf '[pipeline]\nsynthesis_concurrency = %s\n' "$SYNTH" >> /tmp/cuzk.toml; fi
  if [ -n "${SORTED:-}" ]; then printf '[gpu]\nsorted_msm = %s\n' "$SORTED" >> /tmp/cuzk.toml; fi
  echo "== daemon start ($(( $(date +%s) - T0 )) s in)"
  # With $DAEMON_CGROUP (a cgroup v2 directory) the daemon starts inside it.
  setsid nohup bash -c "${DAEMON_CGROUP:+echo \$\$ > $DAEMON_CGROUP/cgroup.procs; }exec $D/cuzk daemon --config /tmp/cuzk.toml --listen $SOCK --metrics-listen 127.0.0.1:9464" > /tmp/daemon.log 2>&1 < /dev/null &
  while [ $(( $(date +%s) - T0 )) -lt $2 ]; do
    local got; got=$(grep -c "SRS loaded" /tmp/daemon.log 2>/dev/null)
    if [ "${got:-0}" -ge $n ] || grep -q "preload.*fail\|rror" /tmp/daemon.log 2>/dev/null; then break; fi
    sleep 2
  done
}
# gpu_tests: gpu_vs_cpu and device_abc, one test at a time, logs in $OUT.
gpu_tests() {
  echo "== gpu_vs_cpu"
  ( time $D/gpu_vs_cpu --test-threads 1 ) > $OUT/gpu_vs_cpu.log 2>&1; grep -E "^test |test result|^real" $OUT/gpu_vs_cpu.log
  echo "== device_abc ($(( $(date +%s) - T0 )) s in)"
  ( time $D/device_abc --test-threads 1 ) > $OUT/device_abc.log 2>&1; grep -E "^test |test result|^real" $OUT/device_abc.log
}
# gen_porep32: TIMING-ONLY porep-32g parameters into /tmp/p32 (about 3.5 min, 47 GB).
gen_porep32() {
  echo "== porep-32g parameters ($(( $(date +%s) - T0 )) s in)"
  ( time timeout 300 $D/cuzk gen timing-params --circuit porep-32g --out /tmp/p32 ) > $OUT/gen-porep.log 2>&1; echo "rc=$? at $(( $(date +%s) - T0 )) s"
}
# prep_32g: the machine's facts, gpu_vs_cpu and device_abc unless $NO_TESTS, TIMING-ONLY
# porep-32g parameters (gen_porep32) and shape-true 32 GiB requests into /tmp/t32 (with $NI,
# the NI-PoRep one too: `porep-ni`).
prep_32g() {
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader; nproc; free -g | head -2
  [ -z "${NO_TESTS:-}" ] && gpu_tests
  gen_porep32
  timeout 120 $D/cuzk gen testdata --sector-size 32GiB --timing-only ${NI:+--ni-porep} --out /tmp/t32 > $OUT/gen-testdata.log 2>&1; echo "testdata rc=$?"
}
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
stop_daemon() { pkill -x cuzk; while pgrep -x cuzk > /dev/null; do sleep 0.5; done; }
# cgroup SIZE: a fresh cgroup v2 with memory.max SIZE; prints its directory.
cgroup() {
  local cg=/sys/fs/cgroup/cuzk-w-$1
  echo "+memory" > /sys/fs/cgroup/cgroup.subtree_control
  rmdir $cg 2>/dev/null; mkdir -p $cg; echo $1 > $cg/memory.max; echo $cg
}
cg_report() { echo "cgroup $1: memory.max $(cat $1/memory.max) memory.peak $(cat $1/memory.peak) events: $(cat $1/memory.events | tr '\n' ' ')"; }
# detach LOG DIR SCRIPT: `SCRIPT run-inner` in its own session (it outlives the call), logging
# to LOG, with OUT=DIR (made) and T0 set to now; follow's count for LOG is reset.
detach() {
  rm -f $1 $1.seen
  mkdir -p $2
  setsid nohup bash -c "OUT=$2 T0=$(date +%s) bash $3 run-inner" > $1 2>&1 < /dev/null &
  echo "run started"
}
# follow LOG DONE [SECS]: prints what LOG gained since the last call (the count of lines shown
# is kept in LOG.seen; a run's `start` removes it), as it grows, until a line matches DONE or
# SECS (540) pass. For a `setsid` run polled by calls back to back.
follow() {
  local log=$1 done=$2 t seen n
  t=$(date +%s); seen=$(cat $log.seen 2>/dev/null || echo 0)
  while [ $(( $(date +%s) - t )) -lt ${3:-540} ]; do
    n=$(wc -l < $log 2>/dev/null || echo 0)
    [ "$n" -gt "$seen" ] && { sed -n "$((seen + 1)),${n}p" $log; seen=$n; echo $seen > $log.seen; }
    grep -q "$done" $log 2>/dev/null && break
    sleep 5
  done
}
# phases LOG [MIN_H]: the median of each phase of the daemon's "cuda start" lines in LOG (ms;
# they are logged with RUST_LOG=info,cuzk_cuda=debug), of the partitions whose H MSM took more
# than MIN_H ms (0: all; 100 keeps a 32 GiB PoRep's or SnapDeals' 2^27 partitions).
phases() {
  python3 - "$1" "${2:-0}" <<'PY'
import re, statistics, sys
def h_ms(l):
    m = re.search(r"msm_h_ms: ([0-9.]+)", l)
    return float(m.group(1)) if m else 0.0
rows = [l for l in open(sys.argv[1], errors="ignore")
        if "cuda start" in l and h_ms(l) > float(sys.argv[2])]
keys = ["abc_ms", "ntt_h_ms", "msm_h_ms", "msm_l_ms", "msm_a_ms", "msm_b_g1_ms", "msm_b_g2_ms",
        "exclusive_ms", "host_sums_ms", "total_ms"]
vals = {k: [float(m.group(1)) for l in rows for m in [re.search(k + r": ([0-9.]+)", l)] if m]
        for k in keys}
print(f"{len(rows)} partitions; medians (ms): " + " | ".join(
    f"{k[:-3]} {statistics.median(v):.1f}" for k, v in vals.items() if v))
PY
}

#!/usr/bin/env bash
# Issue 30: what bounds the H polynomial's and the sorted MSM's kernels, from the hardware
# counters (Nsight Compute, on the device image; `--clock-control none` leaves the clocks as
# the machine runs them). One call on an H100 or H200 (~1 min; the metric names are looked up
# for GH100), with `cuzk-gpu-bench` of a `cuda` build in $CUZK_BIN_DIR.
# 1. Every kernel of the six-NTT H sequence at 2^27 (the first sequence `cuzk-gpu-bench ntt`
#    runs): time, the FMA-heavy pipe's active cycles (IMAD, IMAD.WIDE: the products), the ALU
#    pipe, DRAM throughput, registers, achieved warps.
# 2. One window of the sorted MSM's `smsm_accumulate` at 2^27 − 1 points (the third; `--runs 0`:
#    sppark's MSM, the queued one, then ours, all once): the same pipes, the warp stall
#    reasons (cycles a warp waits per issued instruction, those above 0.05), occupancy.
set -uo pipefail
. "$(dirname "$0")/common.sh"
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader; echo "ncu: $NCU"
$NCU --query-metrics --chip gh100 > /tmp/qm.txt 2>&1
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread
for m in sm__pipe_fmaheavy_cycles_active sm__inst_executed_pipe_alu sm__pipe_fp64_cycles_active; do
  grep -qE "^$m( |$)" /tmp/qm.txt && M=$M,$m.avg.pct_of_peak_sustained_active
done
S=$(grep -oE "^smsp__average_warps_issue_stalled_[a-z_]+_per_issue_active" /tmp/qm.txt | sort -u | sed 's/$/.ratio/' | tr '\n' ',')
table() {  # the CSV of one ncu run: a row a kernel, a column a metric
  python3 - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1]))]
hdr = next(r for r in rows if 'Metric Name' in r)
ks = {}
for r in rows:
    if len(r) >= len(hdr) and r[0].isdigit():
        d = dict(zip(hdr, r))
        ks.setdefault((int(d['ID']), d['Kernel Name'].split('(')[0][:34]), {})[d['Metric Name']] = d['Metric Value']
short = lambda m: m.replace('smsp__average_warps_issue_stalled_', 'stall ').replace('_per_issue_active.ratio', '').split('.avg')[0].replace('__', ' ')
total = 0
for (i, k), m in sorted(ks.items()):
    t = float(m.pop('gpu__time_duration.sum', '0').replace(',', '')) / 1e6
    total += t
    cells = ' | '.join(f"{short(n)} {v}" for n, v in m.items() if not (n.startswith('smsp__average') and float(v.replace(',', '')) < 0.05))
    print(f"| {i} | {k} | {t:.2f} ms | {cells} |")
print(f"total {total:.1f} ms")
PY
}
echo "== the six-NTT H sequence at 2^27"
timeout 240 $NCU --clock-control none --metrics $M --kernel-name regex:'NTT|LDE|cuzk_|bit_rev' \
  --launch-count 24 --csv $D/cuzk-gpu-bench ntt --log-n 27 --runs 0 > /tmp/ncu-ntt.csv 2> /tmp/ncu-ntt.err
echo "rc=$?"; table /tmp/ncu-ntt.csv
echo "== one window of the sorted MSM's accumulation at 2^27 − 1 points"
timeout 240 $NCU --clock-control none --metrics $M,${S%,} --kernel-name regex:smsm_accumulate \
  --launch-skip 2 --launch-count 1 --csv $D/cuzk-gpu-bench msm --log-n 27 --runs 0 > /tmp/ncu-acc.csv 2> /tmp/ncu-acc.err
echo "rc=$?"; table /tmp/ncu-acc.csv
cp -f /tmp/ncu-*.csv $OUT/ 2>/dev/null; true

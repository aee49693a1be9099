#!/usr/bin/env python3
"""Where the GPU idles: reads `nsys stats --report cuda_gpu_trace --format csv` output and
prints the busy fraction (the union of kernels and copies) over the traced span, the idle gaps
by size, and the kernel transitions that hold the most idle time."""
import csv
import sys
from collections import defaultdict

rows = []
with open(sys.argv[1], newline="") as f:
    for r in csv.DictReader(f):
        try:
            start = int(float(r["Start (ns)"]))
            dur = int(float(r["Duration (ns)"]))
        except (KeyError, ValueError):
            continue
        rows.append((start, start + dur, r.get("Name", "?")[:60]))
rows.sort()
if not rows:
    sys.exit("no rows")
span = rows[-1][1] - rows[0][0]
busy = 0
gaps = []
cur_s, cur_e, cur_name = rows[0]
for s, e, name in rows[1:]:
    if s > cur_e:
        busy += cur_e - cur_s
        gaps.append((s - cur_e, cur_name, name))
        cur_s, cur_e, cur_name = s, e, name
    elif e > cur_e:
        cur_e, cur_name = e, name
busy += cur_e - cur_s
print(f"{len(rows)} GPU operations over {span / 1e9:.2f} s: busy {100 * busy / span:.1f} % (kernels and copies, union)")
buckets = [(1e4, "<10us"), (1e5, "10-100us"), (1e6, "0.1-1ms"), (1e7, "1-10ms"), (float("inf"), ">10ms")]
by = defaultdict(lambda: [0, 0])
for g, _, _ in gaps:
    for lim, label in buckets:
        if g < lim:
            by[label][0] += 1
            by[label][1] += g
            break
for _, label in buckets:
    n, t = by[label]
    print(f"  gaps {label:>9}: {n:7d}, {t / 1e9:7.3f} s ({100 * t / span:4.1f} % of the span)")
pairs = defaultdict(lambda: [0, 0])
for g, a, b in gaps:
    pairs[(a, b)][0] += 1
    pairs[(a, b)][1] += g
print("idle time by transition (after -> before), top 15:")
for (a, b), (n, t) in sorted(pairs.items(), key=lambda kv: -kv[1][1])[:15]:
    print(f"  {t / 1e9:7.3f} s {n:6d}x  {a}  ->  {b}")

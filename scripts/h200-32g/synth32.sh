#!/usr/bin/env bash
# Phase I (issue 14 item 3): the real-size synthesis benchmark, no parameters needed: one
# partition of each kind in $KINDS (default porep; one kind a call keeps it within 10 minutes:
# porep ~5 min, snap ~4 min, wpost ~8 min with bellperson's single-threaded run) of the
# TIMING-ONLY 32 GiB requests, synthesized the daemon's way on the 16 cores and by
# bellperson on one thread, with each side's peak host bytes. COMPILE_ALL=1: WindowPoSt also
# through compiled matrices (KINDS=wpost NO_BELLPERSON=1 COMPILE_ALL=1: its compile and both
# syntheses, estimated from session 7's figures to fit one call). DEVICE_ABC=1: ours is the
# witness alone, as beside GPU provers that make a/b/c (the daemon's default on the H200).
# RECORD_WPOST=1: plan as the daemon with `[srs] compile_window_post = false` (WindowPoSt
# recorded in full; by default it is compiled, as the daemon does: KINDS=wpost NO_BELLPERSON=1
# DEVICE_ABC=1 times its compiled witness).
# Ours is timed twice: the first run includes the native witness's once-per-process check.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T0=$(date +%s)
nproc; free -g | head -2
timeout 580 $D/cuzk bench synth --sector-size 32GiB --kinds "${KINDS:-porep}" ${NO_BELLPERSON:+--no-bellperson} ${COMPILE_ALL:+--compile-all} ${DEVICE_ABC:+--device-abc} ${RECORD_WPOST:+--record-window-post} 2>&1 | tee $OUT/bench-synth-${KINDS:-porep}.log
echo "== phase I done at $(( $(date +%s) - T0 )) s"

#!/bin/bash
# s113.sh OUT - PB_HANDOVER_SKIP=1 on hardware (issue 13; opt-in since session 5 because only the
# emulator had run it; ask nvidia-h200, either GPU; ~5 min): the whole HCQ suite on rm:0 with it
# and the kernel log checked, then `bench latency copy --devs rm:0` alternating default / skip,
# two rounds (copy_to_compute: a copy-queue host copy then a compute-queue kernel; the copy rows'
# small host copies pay the handover at every submission).
set -u
OUT=${1:?usage: s113.sh OUT}
mkdir -p "$OUT"
T0=$(date +%s)
[ -f .commit ] && export NVHCQ_COMMIT=$(cut -c1-10 .commit)
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
PB_HANDOVER_SKIP=1 timeout 150 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/t_suite_rm0_skip.txt" 2>&1
echo "hcq suite rm:0 PB_HANDOVER_SKIP=1 rc=$?: $(tail -1 "$OUT/t_suite_rm0_skip.txt")"
grep -E "^  FAIL" -A3 "$OUT/t_suite_rm0_skip.txt" | head -12
for r in 1 2; do
    for v in base skip; do
        e=0
        [ $v = skip ] && e=1
        PB_HANDOVER_SKIP=$e timeout 150 build/nvhcq bench latency copy --devs rm:0 \
            >"$OUT/b_${v}_r$r.txt" 2>&1
        echo "-- r$r [$v] rc=$? ($(($(date +%s) - T0)) s)"
        grep -E "copy_to_compute|launch_sync|h2d_pinned|d2h_pinned" "$OUT/b_${v}_r$r.txt" | sed 's/  */ /g' | cut -c1-110
    done
done
echo "== end $(($(date +%s) - T0)) s"

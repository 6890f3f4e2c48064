#!/bin/bash
# s114.sh OUT - s113's bench A/B again, three rounds, without the suite (ask nvidia-h200, either GPU;
# ~2 min): was s113's one slow h2d_pinned 64 KiB row (9.3 vs 21 GB/s, PB_HANDOVER_SKIP=1, round 2)
# noise? Its 1 GiB rows moved 20-30% between rounds of either variant.
set -u
OUT=${1:?usage: s114.sh OUT}
mkdir -p "$OUT"
T0=$(date +%s)
[ -f .commit ] && export NVHCQ_COMMIT=$(cut -c1-10 .commit)
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
for r in 1 2 3; do
    for v in base skip; do
        e=0
        [ $v = skip ] && e=1
        PB_HANDOVER_SKIP=$e timeout 150 build/nvhcq bench latency copy --devs rm:0 \
            >"$OUT/b_${v}_r$r.txt" 2>&1
        echo "-- r$r [$v] rc=$? ($(($(date +%s) - T0)) s)"
        grep -E "copy_to_compute |h2d_pinned +(4|64) KiB|d2h_pinned +(4|64) KiB|h2d_pinned +1 MiB" "$OUT/b_${v}_r$r.txt" | sed 's/  */ /g' | cut -c1-110
    done
done
echo "== end $(($(date +%s) - T0)) s"

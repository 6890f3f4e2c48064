#!/bin/bash
# s93.sh OUT - why the K-quants stream slower (either GPU; carry .commit; ~4 min). Session 13's
# profiles: gate|up at 1.6-1.7 TB/s for Q4_K / Q5_K (not repacked: a 16-byte block header per
# lane and 32 values per task) against 2.3 for Q8_0R / Q6_KR; session 12's Q4_K tasks of 64
# values (patches/s85-q4k-tasks64.patch) made gate|up slower still (11.0 -> 12.5 us). Nsight
# Compute on cuda:0 (same cubins as rm:0; launches serialized, so no PDL overlap) of one layer's
# four mat-vec launches (Q|K|V, O, gate|up, down) of the per-type kernel, gen-model files q4_k,
# q5_k, q6_k, q8_0 and q4_k with the s85 patch: SpeedOfLight, Occupancy, WarpStateStats,
# MemoryWorkloadAnalysis, LaunchStats, instructions and DRAM bytes per launch.
set -u
OUT=${1:?usage: s93.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build q4 bench/final/patches/s85-q4k-tasks64.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
gen_models q4_k q6_k q8_0
build/nvhcq gen-model --preset llama-3.2-1b --type q5_k --vocab "$V_GPT2" -o /tmp/m_q5_k.gguf >/dev/null 2>&1 || echo "gen q5_k failed"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "== ncu: ${NCU:-none} ($(($(date +%s) - T0)) s)"
[ -n "$NCU" ] || exit 0
for v in "q4_k q4k build" "q5_k q5k build" "q6_k q6k build" "q8_0 q8_0 build" "q4_k q4k /tmp/v_q4/build"; do
    set -- $v
    # every mat-vec launch of a step has the type's kernel (the _w2 one for Q8_0's small launches):
    # skip two tokens' worth, then one layer's four
    tag=$1$([ "$3" = build ] || echo _tasks64)
    timeout 100 $NCU --target-processes all -k "regex:^k_llm_matvec_q8_$2(_w2)?$" -s 140 -c 4 \
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
        --section LaunchStats --metrics smsp__inst_executed.sum,dram__bytes_read.sum \
        $3/nvhcq llm-bench -m /tmp/m_$1.gguf -p 0 -n 8 -r 1 --dev cuda:0 >"$OUT/ncu_$tag.txt" 2>&1
    echo "-- $tag rc=$? ($(($(date +%s) - T0)) s)"
    grep -E "k_llm_matvec|Duration|DRAM Throughput|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Issued Warp|No Eligible|inst_executed|dram__bytes_read|L1/TEX Hit|L2 Hit|Stall" "$OUT/ncu_$tag.txt" | grep -v "^==PROF" | head -60
done 2>&1 | tee "$OUT/a_ncu.txt" | grep -E "^-- |k_llm_matvec|Duration|DRAM Throughput|Warp Cycles Per Issued" | head -80
echo "== end $(($(date +%s) - T0)) s"

#!/bin/bash
# s47.sh OUT - for the session after session 8 (~4 min, either GPU): where the per-launch fixed
# cost of the decode mat-vec goes (session 8: gate|up and down fit F + bytes / 3.6 TB/s with
# F ~5.4 us per launch on H100 and H200). Nsight Compute on cuda:0 (same cubins as rm:0; ncu
# serializes the launches, so PDL overlap is not in these numbers) for the per-type Q6_K kernel:
# 8 launches of one layer after a skip (qkv, o, gate|up, down twice), sections SpeedOfLight,
# Occupancy, WarpStateStats, MemoryWorkloadAnalysis, LaunchStats, SchedulerStats, and the
# instruction count per launch (for instructions per weight byte).
set -u
out=${1:?usage: s47.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
build/nvhcq gen-model --preset llama-3.2-1b --type q6_k --vocab $V -o /tmp/m_q6_k.gguf >/dev/null 2>&1 || echo "gen failed"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "== ncu: ${NCU:-none}"
[ -n "$NCU" ] || exit 0
timeout 400 $NCU --target-processes all -k regex:k_llm_matvec_q8_q6k -s 200 -c 8 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
    --section LaunchStats --section SchedulerStats --metrics smsp__inst_executed.sum,dram__bytes_read.sum \
    build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 16 -r 1 --dev cuda:0 >"$out/a_ncu.txt" 2>&1
grep -E "k_llm_matvec|Grid Size|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Issued Warp|Eligible|No Eligible|inst_executed|dram__bytes|L2 Hit" "$out/a_ncu.txt" | head -160

#!/bin/bash
# s92.sh OUT - H200 rows in the least device time (ask nvidia-h200-x2 or nvidia-h200; carry .llqb
# .commit; ~4 min on an H200; on any other GPU it stops after one line): `bench gemm latency`
# (rm:0, cuda:0, cuBLAS), then tg128 rm:0 / cuda:0 on the llama-quantize Q4_K_M / Q6_K / Q8_0
# files (.llqb/llama-quantize: the files session 8's H200 call measured llama.cpp on; no
# llama.cpp build here, so no same-call llama.cpp rows). GPU 0 only.
set -u
OUT=${1:?usage: s92.sh OUT}
mkdir -p "$OUT"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
grep -q "^0, .*H200" "$OUT/a_gpu.txt" || { echo "GPU 0 is not an H200: stopping"; exit 0; }
export CUDA_VISIBLE_DEVICES=0
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
quant_files Q4_K_M Q6_K Q8_0
timeout 90 build/nvhcq bench gemm latency --devs rm:0,cuda:0 --json "$OUT/a_bench.json" >"$OUT/a_bench.txt" 2>&1
echo "bench rc=$? ($(($(date +%s) - T0)) s)"
grep -E "gemm_(f16|bf16) |launch_sync|graph_300|dep_chain" "$OUT/a_bench.txt" | cut -c1-120
for ty in Q4_K_M Q6_K Q8_0; do for d in rm:0 cuda:0; do
    echo "$ty [$d] tg128: $(tg_cell build/nvhcq /tmp/q/$ty.gguf $d)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== end $(($(date +%s) - T0)) s"

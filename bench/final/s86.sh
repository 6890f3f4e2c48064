#!/bin/bash
# s86.sh OUT - the H200 evidence issues 11-13 lack (ask nvidia-h200; on an H100 it repeats the
# H100 rows; carry .anchor .commit; ~9 min): `bench gemm latency --devs rm:0,cuda:0` with nothing
# else running, then while llama.cpp builds the gen-model tg128 rows (rm:0, cuda:0; CPU busy:
# indicative), then the same-file comparison on five types (tg128, pp512; REPS 3) and pp2048 on
# three. Then, in a call of its own, `bench/final/s84.sh` (the whole make test-gpu). Pieces: lib.sh.
set -u
OUT=${1:?usage: s86.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
timeout 200 build/nvhcq bench gemm latency --devs rm:0,cuda:0 --json "$OUT/a_bench.json" >"$OUT/a_bench.txt" 2>&1
echo "bench rc=$? ($(($(date +%s) - T0)) s)"
grep -E "gemm_(f16|bf16) |launch_sync|graph_300|dep_chain" "$OUT/a_bench.txt" | cut -c1-120
ll_build_bg
gen_models q6_k q8_0 q4_k
for ty in q6_k q8_0 q4_k; do for d in rm:0 cuda:0; do
    echo "$ty [$d] tg128 (llama.cpp compiling): $(tg_cell build/nvhcq /tmp/m_$ty.gguf $d)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
ll_wait || exit 1
c=$(cat .commit)
TYPES="Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M" REPS=3 vs_run build/nvhcq /tmp/vs "$c"
grep -E "tg128|pp512" "$OUT/a_vs.md"
mkdir -p /tmp/vs2048 && ln -sfn /tmp/vs/models /tmp/vs2048/models
TYPES="Q4_K_M Q6_K Q8_0" REPS=2 PP=2048 TG=0 VS_TIMEOUT=120 vs_run build/nvhcq /tmp/vs2048 "$c"
grep -E "pp2048" "$OUT/a_vs2048.md"
echo "== end $(($(date +%s) - T0)) s"

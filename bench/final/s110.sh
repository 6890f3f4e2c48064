#!/bin/bash
# s110.sh OUT - session 15's last evidence call (ask nvidia-h200; carry .anchor .llqb .commit;
# <= 9.5 min): the final tree against llama.cpp on the same five llama-quantize files (tg128,
# pp512; REPS 3), its LLM GPU tests on rm:0 and cuda:0 while llama.cpp builds, then (time left)
# tg128 / pp512 at depth 1024 and 4096 on three types. On an H200 `bench gemm latency --devs
# rm:0,cuda:0` runs first with nothing else running (the rows issues 12 and 13 lack there), and
# the depth rows only if time is left. Pieces: lib.sh. LLM_TESTS: the unit tests to run (s120.sh).
set -u
OUT=${1:?usage: s110.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
if grep -q H200 "$OUT/a_gpu.txt"; then
    timeout 170 build/nvhcq bench gemm latency --devs rm:0,cuda:0 --json "$OUT/a_bench.json" >"$OUT/a_bench.txt" 2>&1
    echo "bench rc=$? ($(($(date +%s) - T0)) s)"
    grep -E "gemm_(f16|bf16) |launch_sync|graph_300|dep_chain" "$OUT/a_bench.txt" | cut -c1-110
fi
ll_build_bg
for t in ${LLM_TESTS:-test_llm_e2e test_llm_real test_llm_matvec test_llm_dequant}; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
mkdir -p /tmp/vs/models # the files vs-llamacpp.sh would write, by the carried quantizer (same source)
build/nvhcq gen-model --preset llama-3.2-1b --type f16 --vocab "$V_GPT2" -o /tmp/vs/models/llama-3.2-1b-f16.gguf >/dev/null 2>&1
for ty in Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M; do
    .llqb/llama-quantize /tmp/vs/models/llama-3.2-1b-f16.gguf /tmp/vs/models/llama-3.2-1b-$ty.gguf $ty >/dev/null 2>&1 || echo "quantize $ty failed"
done
ll_wait || exit 1
c=$(cat .commit)
TYPES="Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M" REPS=3 VS_TIMEOUT=$((560 - ($(date +%s) - T0))) vs_run build/nvhcq /tmp/vs "$c"
grep -E "tg128|pp512" "$OUT/a_vs.md"
echo "vs done ($(($(date +%s) - T0)) s)"
left=$((565 - ($(date +%s) - T0)))
if [ $left -gt 60 ]; then
    mkdir -p /tmp/vsd && ln -sfn /tmp/vs/models /tmp/vsd/models
    TYPES="Q4_K_M Q6_K Q8_0" REPS=2 DEPTHS=1024,4096 VS_TIMEOUT=$left vs_run build/nvhcq /tmp/vsd "$c"
    grep -E "_d" "$OUT/a_vsd.md"
fi
echo "== end $(($(date +%s) - T0)) s"

#!/bin/sh
# Developer script (GPU machine, one call): build, check the tensor-core kernels on rm:0 and
# cuda:0 (hcq suite rows, LLM e2e), then record `nvhcq bench matmul` and llm-bench pp512 for
# LLaMA-3.2-1B shapes (Q6_K, Q4_K, Q8_0). Usage: sh bench/tune/gpu_record.sh OUTDIR
out=${1:-/tmp/rec}
mkdir -p $out
make -j16 CUARCH=90 >$out/build.log 2>&1 || { tail -30 $out/build.log; exit 1; }
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for t in q6_k q4_k q8_0; do
    ./build/nvhcq gen-model --preset llama-3.2-1b --type $t --vocab $V -o /tmp/m_$t.gguf >$out/gen_$t.log 2>&1 &
done
for d in rm:0 cuda:0; do
    timeout 150 ./build/tests/hcq_suite --dev $d 2>&1 | grep -E "FAIL|passed"
done | tee $out/suite.txt
HCQ_TEST_DEVS="rm:0 cuda:0" ./build/tests/test_llm_e2e devices_match prefill_gemm 2>&1 | tail -12 | tee $out/e2e.txt
wait
for t in q6_k q4_k q8_0; do
    for d in rm:0 cuda:0; do
        echo "== $t $d"
        ./build/nvhcq llm-bench -m /tmp/m_$t.gguf -p 512 -n 16 -r 3 --dev $d 2>&1 | tail -4
    done
done | tee $out/llm.txt
NVHCQ_COMMIT=${NVHCQ_COMMIT:-unknown} ./build/nvhcq bench matmul --devs rm:0,cuda:0 --json $out/bench-matmul.json \
    >$out/bench.txt 2>&1
grep -E "gemm|matmul_f32|qgemm|qmatvec|FAIL|ERR" $out/bench.txt | grep -E "4096|8192|1024|512x8192|FAIL|ERR" | cut -c1-140
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $out/gpu.txt

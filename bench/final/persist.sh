#!/bin/bash
# persist.sh OUT - one device call: build, the persistent decode kernel's tests on the GPU
# backends (vs the per-kernel path, the barrier-timeout fallback), then tg128 per type with
# the per-kernel path (NVHCQ_PERSIST=0) and the persistent one, same process order, rm:0;
# cuda:0 persistent; Q6_K at depth; one profile of each path.
set -u
out=${1:?usage: persist.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 200 $B/tests/test_llm_e2e persistent_vs_per_kernel devices_match_cpu 2>&1 | grep -v "warn\]" | tail -14
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 120 $B/tests/test_llm_attn_decode 2>&1 | tail -3
echo "== tests done $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in ${TYPES:-q6_k q4_k q8_0}; do
    f=/tmp/m_$ty.gguf
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o $f >/dev/null 2>&1 || echo "gen $ty failed"
    for ps in 0 1 0 1; do
        echo "-- $ty NVHCQ_PERSIST=$ps"
        NVHCQ_PERSIST=$ps timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error|warn" | tail -2
    done
done
f=/tmp/m_q6_k.gguf
echo "-- cuda:0 q6_k persistent, per-kernel"
timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev cuda:0 2>&1 | grep -E "tg|error|warn"
NVHCQ_PERSIST=0 timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev cuda:0 2>&1 | grep -E "tg|error|warn"
for ps in 1 0; do
    echo "-- profile NVHCQ_PERSIST=$ps"
    NVHCQ_PERSIST=$ps timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 2 --profile --dev rm:0 2>&1 | tail -12
done
for ps in 1 0; do
    echo "-- depth NVHCQ_PERSIST=$ps"
    NVHCQ_PERSIST=$ps timeout 120 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 2 -d ${DEPTH:-0,1024,4096} --dev rm:0 2>&1 | grep -E "tg|error"
done
echo "persist done after $(($(date +%s) - t0)) s"
# A/B of a branch's tree carried in .wt_pa (prefill work): its GPU prefill tests and pp512
if [ -d .wt_pa ]; then
    (cd .wt_pa && make -j16 CUARCH=90 >"$out/build_pa.log" 2>&1) || { echo "branch build failed"; tail -20 "$out/build_pa.log"; }
    HCQ_TEST_DEVS="rm:0 cuda:0" timeout 200 .wt_pa/build/tests/test_llm_e2e devices_match_cpu devices_match_cpu_gemm prefill_vs_decode 2>&1 | grep -v "warn\]" | tail -8
    for r in main branch main branch; do
        b=$B/nvhcq; [ $r = branch ] && b=.wt_pa/build/nvhcq
        echo "-- pp512 $r"
        timeout 60 $b llm-bench -m /tmp/m_q6_k.gguf -p 512 -n 0 -r 3 --dev rm:0 2>&1 | grep -E "pp|error"
    done
fi
echo "all done after $(($(date +%s) - t0)) s"

#!/bin/bash
# s10.sh OUT - session 5, one device call (after s9: L1 reads again, the cg variant for A/B): programmatic dependent launch (HCQ_LAUNCH_DEP_WAIT,
# Hopper QMD latches on rm). Build; the chain test (hcq suite dep_wait_chain) on rm:0 with each
# default latch-id policy and cuda:0; the latency rows (dep_step_graph vs dep_step_pdl); the LLM PDL vs
# serial logits test; tg128 NVHCQ_PDL=0 vs 1 alternating (same process order) per type.
set -u
out=${1:?usage: s9.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
timeout 100 $B/tests/test_llm_matvec 2>&1 | grep -E "FAIL|passed" | tail -3
timeout 60 $B/tests/hcq_suite --dev rm:0 dep_wait_chain update_copy prune exec_2 2>&1 | grep -E "ok|FAIL|passed|mismatch" | head -12
timeout 60 $B/tests/hcq_suite --dev cuda:0 dep_wait_chain 2>&1 | grep -E "FAIL|passed" | head -3
echo "== latency rows $(($(date +%s) - t0)) s"
timeout 120 $B/nvhcq bench latency --devs cuda:0,rm:0 2>&1 | grep -E "dep_step|FAIL|ERROR" | head -20
export HCQ_TEST_DEVS="rm:0 cuda:0"
timeout 200 $B/tests/test_llm_e2e pdl_vs_serial 2>&1 | grep -E "rm:0|cuda:0|FAIL|passed" | grep -v skipped | tail -12
unset HCQ_TEST_DEVS
echo "== tests done $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in ${TYPES:-q6_k q4_k q8_0}; do
    f=/tmp/m_$ty.gguf
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o $f >/dev/null 2>&1 || echo "gen $ty failed"
    for v in 0 1 cg 0 1 cg; do
        echo "-- $ty NVHCQ_PDL=$v (cg: NVHCQ_MVQ=cg with PDL)"
        if [ $v = cg ]; then e="NVHCQ_MVQ=cg"; else e="NVHCQ_PDL=$v"; fi
        env $e timeout 40 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error|warn" | tail -2
    done
done
f=/tmp/m_q6_k.gguf
for v in 0 1; do
    echo "-- cuda:0 q6_k HCQ_CUDA_PDL=$v"
    HCQ_CUDA_PDL=$v timeout 40 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev cuda:0 2>&1 | grep -E "tg|error" | tail -1
done
echo "all done after $(($(date +%s) - t0)) s"

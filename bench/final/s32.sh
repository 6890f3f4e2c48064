#!/bin/bash
# s32.sh OUT - session 7, one H200 call (~8 min): llama.cpp builds in the background (.anchor
# carried) while nvhcq builds and runs its correctness checks (nothing timed meanwhile: s31 showed
# decode timings taken during the build are worthless); then tg128 A/B (default, nef, PDL off),
# the runtime/GEMM rows against CUDA (bench gemm copy latency, rm:0 and cuda:0) and the same-file
# llama.cpp comparison on rm:0. Key files are named a_* so they come back first.
set -u
out=${1:?usage: s32.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
for i in 1 2; do
    echo "e2e $i: $(HCQ_TEST_DEVS=rm:0 timeout 150 build/tests/test_llm_e2e pdl_vs_serial rope_fused_vs_own_launch persistent_vs_per_kernel 2>&1 | grep -E "step [0-9]+:|passed" | tr '\n' ' ')"
done
echo "e2e all: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "matvec: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_matvec 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "suite: $(timeout 120 build/tests/hcq_suite --dev rm:0 dep_wait_mixed dep_wait_chain 2>&1 | tail -1)"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
echo "== tests done $(($(date +%s) - t0)) s"
wait $bp
tail -1 "$out/llbuild.log"
for ty in q6_k q4_k q8_0; do
    for v in "X=default" "NVHCQ_MVQ=nef" "NVHCQ_PDL=0"; do
        r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
        echo "$ty [$v] $r"
    done
done
echo "== bench $(($(date +%s) - t0)) s"
timeout 200 build/nvhcq bench gemm copy latency --devs rm:0,cuda:0 --json "$out/a_bench.json" >"$out/bench.txt" 2>&1
grep -E "gemm|latency|d2d|D2D" "$out/bench.txt" | grep -E "rm:0|cuda:0" | cut -c1-118 | head -70
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama.cpp"; exit 1; }
echo "== compare $(($(date +%s) - t0)) s"
DEVS=rm:0 REPS=3 timeout $((590 - ($(date +%s) - t0))) bash bench/vs-llamacpp.sh $B "$out/vs" 2>&1 | tail -3
cp "$out/vs/vs-llamacpp.md" "$out/a_vs-llamacpp.md" 2>/dev/null; cp "$out/vs/vs-llamacpp.json" "$out/a_vs-llamacpp.json" 2>/dev/null
grep -E "^\|" "$out/a_vs-llamacpp.md" 2>/dev/null | head -20
echo "== end $(($(date +%s) - t0)) s"

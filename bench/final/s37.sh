#!/bin/bash
# s37.sh OUT - session 8, one call (~9.5 min), on the H200 when one comes: llama.cpp builds in the
# background while nvhcq builds and runs its LLM correctness tests (nothing timed meanwhile);
# then, warm: the latency rows and tg128 with the QMD's per-launch invalidations cut to the two
# L1 ones (PB_QMD_INVALIDATE=0xC) against the default, alternating (next7's one-sided order put
# the default first, while the clocks ramped), the in-situ decode profile against the serial one
# after a warm tg128, the same-file llama.cpp comparison on rm:0 and cuda:0, and the runtime/GEMM
# rows against CUDA with what time is left. Key files are named a_* so they come back first.
set -u
out=${1:?usage: s37.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "e2e: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "e2e 0xC: $(PB_QMD_INVALIDATE=0xC HCQ_TEST_DEVS='rm:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
echo "== tests done $(($(date +%s) - t0)) s"
wait $bp
tail -1 "$out/llbuild.log"
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 5 --dev rm:0 >/dev/null 2>&1
for r in 1 2; do for v in X=0 PB_QMD_INVALIDATE=0xC; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|dep_chain|dep_step" | cut -c1-110
done; done
for ty in q6_k q4_k q8_0; do for r in 1 2; do for v in X=0 PB_QMD_INVALIDATE=0xC; do
    x=$(env $v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "tg128 $ty r$r [$v] $x"
done; done; done
for v in X=0 NVHCQ_PROF_SERIAL=1; do
    echo "-- profile [$v]"
    env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --profile --dev rm:0 2>&1 | grep -E "^\| [a-z]|profile:" | head -12
done
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama.cpp"; exit 1; }
echo "== compare $(($(date +%s) - t0)) s"
DEVS="rm:0 cuda:0" REPS=3 timeout $((560 - ($(date +%s) - t0))) bash bench/vs-llamacpp.sh $B "$out/vs" 2>&1 | tail -3
cp "$out/vs/vs-llamacpp.md" "$out/a_vs-llamacpp.md" 2>/dev/null; cp "$out/vs/vs-llamacpp.json" "$out/a_vs-llamacpp.json" 2>/dev/null
grep -E "^\|" "$out/a_vs-llamacpp.md" 2>/dev/null | head -20
echo "== bench $(($(date +%s) - t0)) s"
left=$((585 - ($(date +%s) - t0)))
[ $left -gt 30 ] && timeout $left build/nvhcq bench gemm latency --devs rm:0,cuda:0 --json "$out/a_bench.json" >"$out/bench.txt" 2>&1
grep -E "gemm|latency" "$out/bench.txt" | grep -E "rm:0|cuda:0" | cut -c1-118 | head -60
echo "== end $(($(date +%s) - t0)) s"

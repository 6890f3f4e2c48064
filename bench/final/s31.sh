#!/bin/bash
# s31.sh OUT - session 7, one H100 call (~9 min): the PDL fix as the new default (producer
# completion membar L1_MEMBAR + task chasing, PDL on for rm) and evict-first weights as the
# default mat-vec, verified and compared: (1) cuda_qmd_scan after each launch (CUDA's PDL QMDs);
# (2) the failing e2e A/Bs x3, test_llm_e2e, hcq suite dep_wait_* on rm:0; (3) tg128 A/B against
# nef, task chasing off, PDL off and a membar on every chained QMD; (4) latency rows with and
# without the chain membar; (5) same-file llama.cpp comparison (rm:0) - llama.cpp builds in the
# background meanwhile (.anchor carried).
set -u
out=${1:?usage: s31.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/kernels -Isrc/gpu -Isrc/util tests/hw/cuda_qmd_scan.c \
    build/libnvhcq.a -ldl -lm -lpthread -o build/cuda_qmd_scan || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 100 build/cuda_qmd_scan cuda:0 >"$out/qmd_scan.txt" 2>&1
grep -E "^== QMD|MEMBAR|LATCH|PRE_EXIT|SYNC_DOMAIN|TASK|DEPENDENT_QMD_|unnamed|QMDs found|failed" "$out/qmd_scan.txt" | head -70
for i in 1 2 3; do
    echo "e2e $i: $(HCQ_TEST_DEVS=rm:0 timeout 150 build/tests/test_llm_e2e pdl_vs_serial rope_fused_vs_own_launch persistent_vs_per_kernel 2>&1 | grep -E "step [0-9]+:|passed" | tr '\n' ' ')"
done
echo "e2e all: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "matvec: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_matvec 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "suite: $(timeout 120 build/tests/hcq_suite --dev rm:0 dep_wait_mixed dep_wait_chain 2>&1 | tail -1)"
echo "== tests done $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
    for v in "X=default" "NVHCQ_MVQ=nef" "PB_PDL_TASK_CHASING=0" "NVHCQ_PDL=0" "PB_QMD_CHAIN_MEMBAR=3 PB_QMD_CHAIN_TASK_CHASING=1" "X=default"; do
        r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
        echo "$ty [$v] $r"
    done
done
wait $bp
tail -1 "$out/llbuild.log"
echo "== llama.cpp ready $(($(date +%s) - t0)) s"
for v in "X=default" "PB_QMD_CHAIN_MEMBAR=3 PB_QMD_CHAIN_TASK_CHASING=1"; do
    echo "-- latency [$v]"
    env $v timeout 90 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch|graph|back|dep" | head -12
done
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama.cpp"; exit 1; }
DEVS=rm:0 REPS=3 timeout $((590 - ($(date +%s) - t0))) bash bench/vs-llamacpp.sh $B "$out/vs" 2>&1 | tail -3
cat "$out/vs/vs-llamacpp.md" 2>/dev/null | grep -E "^\|" | head -30
echo "== end $(($(date +%s) - t0)) s"

#!/bin/bash
# s70.sh OUT - right after s69.sh on the same warm machine (reuses /tmp/ll, else builds llama.cpp
# first, ~4 min; carry .anchor and .commit): the same-file comparison (tg128, pp512; rm:0), then
# pp512 and pp2048 on those files with the LLM prefill GEMM on the cp.async producer
# (NVHCQ_LLM_GEMM_TMA=0) and on TMA (=1, never run on a GPU before: its correctness is in s69's
# test_llm_dequant rows), each also with NVHCQ_GEMM=wgmma (every prefill GEMM on the wide
# kernel). Logs a_*.
set -u
out=${1:?usage: s70.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
ll=/tmp/ll
if [ ! -x $ll/b/bin/llama-bench ]; then
    bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1
    echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s"
fi
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
NVHCQ_COMMIT=$(cat .commit 2>/dev/null) DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=2 \
    timeout 300 bash bench/vs-llamacpp.sh $B "$out/vs" >"$out/vs.log" 2>&1
cp "$out/vs/vs-llamacpp.md" "$out/a_vs.md" 2>/dev/null
grep -E "^\|" "$out/vs/vs-llamacpp.md" 2>/dev/null | head -30
for f in "$out"/vs/*-Q*.gguf; do [ -e "$f" ] || continue
    for p in 512 2048; do for g in auto wgmma; do for v in 0 1; do
        echo "-- $(basename $f) pp$p NVHCQ_GEMM=$g NVHCQ_LLM_GEMM_TMA=$v"
        NVHCQ_GEMM=$g NVHCQ_LLM_GEMM_TMA=$v timeout 60 build/nvhcq llm-bench -m $f -p $p -n 0 -r 3 --dev rm:0 2>&1 |
            grep -E "^\|.*pp"
    done; done; done
done 2>&1 | tee "$out/a_llm_tma.txt"
echo "== end $(($(date +%s) - t0)) s"

#!/bin/bash
# s13.sh OUT - session 5, H200 call (~8 min): llama.cpp anchor built in the background while the
# LLM end-to-end test runs on rm:0 and cuda:0 (whole output kept); after the build (no CPU
# contention) the PDL / uniform carve-out A/B (tg128, same process order), then the same-file
# comparison (bench/vs-llamacpp.sh) and decode at depth.
set -u
out=${1:?usage: s13.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== nvhcq built $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 250 build/tests/test_llm_e2e >"$out/e2e.log" 2>&1
echo "e2e rc=$?: $(grep -E 'passed' "$out/e2e.log" | tail -1)"
grep -B6 -E "^  FAIL" "$out/e2e.log" | head -30
timeout 60 build/tests/hcq_suite --dev rm:0 dep_wait_chain kernel_dep_step 2>&1 | tail -1
wait $bp
tail -1 "$out/llbuild.log"
echo "== A/B $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
f=/tmp/m_q6_k.gguf
build/nvhcq gen-model --preset llama-3.2-1b --type q6_k --vocab $V -o $f >/dev/null 2>&1
for v in "NVHCQ_PDL=0" "NVHCQ_PDL=1" "HCQ_SM_CARVEOUT_KIB=0" "NVHCQ_PDL=0" "NVHCQ_PDL=1" "HCQ_SM_CARVEOUT_KIB=0"; do
    echo "-- q6_k $v: $(env $v timeout 40 build/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error" | tail -1)"
done
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama.cpp"; exit 1; }
echo "== compare $(($(date +%s) - t0)) s"
REPS=${REPS:-3} bash bench/vs-llamacpp.sh $B "$out/vs" 2>&1 | tail -3
cat "$out/vs/vs-llamacpp.md" 2>/dev/null | head -40
cp "$out/vs/vs-llamacpp.json" "$out/vs/vs-llamacpp.md" "$out/" 2>/dev/null
m=$out/vs/models/llama-3.2-1b-Q6_K.gguf
echo "== depth $(($(date +%s) - t0)) s"
timeout 100 $B/llama-bench -m $m -fa 1 -ngl 99 -p 0 -n 64 -r 2 -d 0,1024,4096 2>&1 | grep -E "tg|error" | tail -4
timeout 100 build/nvhcq llm-bench -m $m -p 0 -n 64 -r 3 -d 0,1024,4096 --dev rm:0 2>&1 | grep -E "tg" | tail -4
rm -rf "$out/vs"
echo "s13 done after $(($(date +%s) - t0)) s"

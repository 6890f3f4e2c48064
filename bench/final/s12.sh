#!/bin/bash
# s12.sh OUT - session 5 verification + comparison call (~8 min, 16 cores): builds the llama.cpp
# anchor (.anchor/llamacpp, carried) in the background while nvhcq builds and runs its GPU tests
# (HCQ suite on rm:0 and cuda:0 with the kernel log checked per test, LLM tests), then an A/B of
# the 3-CTA mat-vec under PDL, then the same-file comparison (bench/vs-llamacpp.sh) and depth.
set -u
out=${1:?usage: s12.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== nvhcq built $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for d in rm:0 cuda:0; do
    timeout 200 build/tests/hcq_suite --dev $d --klog >"$out/suite_${d%:0}.log" 2>&1
    echo "hcq_suite $d rc=$?: $(tail -1 "$out/suite_${d%:0}.log")"
    grep -E "^  FAIL" "$out/suite_${d%:0}.log" | head -5
done
for t in test_llm_matvec test_llm_attn_decode test_llm_attn_prefill test_llm_e2e test_llm_real; do
    HCQ_TEST_DEVS="rm:0 cuda:0" timeout 200 build/tests/$t 2>&1 | grep -E "FAIL|passed|rm:0|cuda:0" | tail -8
done >"$out/tests.log" 2>&1
grep -E "passed|FAIL" "$out/tests.log"
echo "== tests done $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k; do
    f=/tmp/m_$ty.gguf
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o $f >/dev/null 2>&1
    for v in "NVHCQ_PDL=1" "NVHCQ_MVQ=s3" "NVHCQ_PDL=1" "NVHCQ_MVQ=s3"; do
        echo "-- $ty $v: $(env $v timeout 40 build/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error" | tail -1)"
    done
done
wait $bp
tail -2 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama.cpp"; exit 1; }
echo "== compare $(($(date +%s) - t0)) s"
REPS=${REPS:-3} bash bench/vs-llamacpp.sh $B "$out/vs" 2>&1 | tail -3
cat "$out/vs/vs-llamacpp.md" 2>/dev/null | head -40
m=$out/vs/models/llama-3.2-1b-Q6_K.gguf
echo "== depth $(($(date +%s) - t0)) s"
timeout 100 $B/llama-bench -m $m -fa 1 -ngl 99 -p 0 -n 64 -r 2 -d 0,1024,4096 2>&1 | grep -E "tg|error" | tail -4
timeout 100 build/nvhcq llm-bench -m $m -p 0 -n 64 -r 2 -d 0,1024,4096 --dev rm:0 2>&1 | grep -E "tg" | tail -4
echo "s12 done after $(($(date +%s) - t0)) s"

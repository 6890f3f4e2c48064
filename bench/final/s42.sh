#!/bin/bash
# s42.sh OUT - session 8's record call (~9.5 min), once per GPU: llama.cpp builds in the
# background while nvhcq builds and runs its LLM correctness tests on rm:0 and cuda:0; then the
# mat-vec body A/B on Q8_0 and Q4_0 (default vs NVHCQ_MVQ=nts / ts: which types get their own
# copy), the same-file llama.cpp comparison (Q4_K_M Q6_K Q8_0 on rm:0 and cuda:0; then Q4_0
# Q5_K_M on rm:0; then Q6_K at depths 1024 and 4096), as time allows. Set NVHCQ_COMMIT (the
# device copy's .git is not the tree's). Key files are named a_* so they come back first.
set -u
out=${1:?usage: s42.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
echo "e2e: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "matvec: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/test_llm_matvec 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "attn_decode: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 100 build/tests/test_llm_attn_decode 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q8_0 q4_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
echo "== tests done $(($(date +%s) - t0)) s"
wait $bp
tail -1 "$out/llbuild.log"
for ty in q8_0 q4_0; do for v in X=0 NVHCQ_MVQ=nts NVHCQ_MVQ=ts X=0; do
    x=$(env $v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "tg128 $ty [$v] $x"
done; done
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama.cpp"; exit 1; }
echo "== compare $(($(date +%s) - t0)) s"
DEVS="rm:0 cuda:0" REPS=3 timeout $((575 - ($(date +%s) - t0))) bash bench/vs-llamacpp.sh $B "$out/vs" 2>&1 | tail -1
cp "$out/vs/vs-llamacpp.md" "$out/a_vs-llamacpp.md" 2>/dev/null; cp "$out/vs/vs-llamacpp.json" "$out/a_vs-llamacpp.json" 2>/dev/null
grep -E "^\|" "$out/a_vs-llamacpp.md" 2>/dev/null | head -20
echo "== more types $(($(date +%s) - t0)) s"
left=$((560 - ($(date +%s) - t0)))
[ $left -gt 60 ] && TYPES="Q4_0 Q5_K_M" DEVS="rm:0" REPS=3 timeout $left bash bench/vs-llamacpp.sh $B "$out/vs2" 2>&1 | tail -1
cp "$out/vs2/vs-llamacpp.md" "$out/a_vs2.md" 2>/dev/null; cp "$out/vs2/vs-llamacpp.json" "$out/a_vs2.json" 2>/dev/null
grep -E "^\| Q" "$out/a_vs2.md" 2>/dev/null
echo "== depth $(($(date +%s) - t0)) s"
left=$((585 - ($(date +%s) - t0)))
[ $left -gt 60 ] && TYPES="Q6_K" DEVS="rm:0" PP=512 DEPTHS="1024,4096" REPS=2 timeout $left bash bench/vs-llamacpp.sh $B "$out/vs3" 2>&1 | tail -1
cp "$out/vs3/vs-llamacpp.md" "$out/a_vs3.md" 2>/dev/null; cp "$out/vs3/vs-llamacpp.json" "$out/a_vs3.json" 2>/dev/null
grep -E "^\| Q" "$out/a_vs3.md" 2>/dev/null
echo "== end $(($(date +%s) - t0)) s"

#!/bin/bash
# s130.sh OUT - session 17's last evidence call (ask nvidia-h200; carry .anchor .llqb .commit; <= 9.5 min).
# On an H200: s86.sh (the H200 rows issues 11-13 lack). On an H100: the final tree against the
# tree before the device-wide local-memory store and the rm channel lock (variant "before" =
# patches/s130-before-lmem.patch, which takes src/ and tests/ back to 0f805ac): tg128 on Q8_0,
# Q6_K, Q4_K_M alternating, two rounds (the per-submission cost of the store's bookkeeping); the
# LLM GPU tests not run since the merge on rm:0 and cuda:0; the thread and local-memory suite
# tests on rm:0 with the kernel log checked.
set -u
OUT=${1:?usage: s130.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case "$g" in *H200*) exec bash bench/final/s86.sh "$OUT" ;; esac
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
variant_build before "$PWD/bench/final/patches/s130-before-lmem.patch" || exit 1
quant_files Q8_0 Q6_K Q4_K_M >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
cell() { timeout 60 "$1" llm-bench -m "$2" -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}'; }
for r in 1 2; do for f in Q8_0 Q6_K Q4_K_M; do
    echo "$f r$r [before] tg128: $(cell /tmp/v_before/build/nvhcq /tmp/q/$f.gguf)"
    echo "$f r$r [final] tg128: $(cell build/nvhcq /tmp/q/$f.gguf)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
timeout 100 build/tests/hcq_suite --dev rm:0 --klog queues_made local_memory kernel_stack >"$OUT/t_suite.txt" 2>&1
echo "hcq_suite rm:0 rc=$? $(grep -E "FAIL|passed" "$OUT/t_suite.txt" | tr '\n' ' ')"
for t in test_llm_real test_llm_matvec test_llm_dequant test_llm_attn_o; do
    [ $(($(date +%s) - T0)) -gt 480 ] && { echo "$t skipped (time)"; continue; }
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 100 build/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rc=$? $(grep -E "FAIL|passed" "$OUT/t_$t.txt" | tr '\n' ' ')"
done
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"

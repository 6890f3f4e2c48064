#!/bin/bash
# s119.sh OUT - session 16 (either GPU; carry .llqb .commit; ~7 min): the host wait's spin phase by
# time (2 ms on a GPU, hcq_wait_value64) against the counted one before it (20000 polls, 1000
# yields, then 20 us sleeps; variant "counted" = patches/s119-wait-counted.patch). tg128 at depth 0
# and 4096 (steps of ~0.6 and ~1 ms) on Q8_0 and Q6_K, alternating; the HCQ suite's wait/signal tests.
set -u
OUT=${1:?usage: s119.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build counted bench/final/patches/s119-wait-counted.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q8_0 Q6_K >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
timeout 120 build/tests/hcq_suite --dev rm:0 --klog signal wait timeout graph >"$OUT/t_suite.txt" 2>&1
echo "hcq_suite rc=$? $(tail -1 "$OUT/t_suite.txt")"
dcell() { timeout 120 "$1" llm-bench -m "$2" -p 0 -n 128 -d "$3" -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}'; }
for r in 1 2; do for f in Q8_0 Q6_K; do for d in 0 4096; do
    echo "$f d$d r$r [base] tg128: $(dcell build/nvhcq /tmp/q/$f.gguf $d)"
    echo "$f d$d r$r [counted] tg128: $(dcell /tmp/v_counted/build/nvhcq /tmp/q/$f.gguf $d)"
done; done; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== end $(($(date +%s) - T0)) s"

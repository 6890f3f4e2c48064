#!/bin/bash
# s44.sh OUT - session 8: does the RM mapping's page size matter? HCQ_RM_MAP_HUGE=1 maps the
# 2 MiB-page vidmem (the weights, KV cache) with NVOS46 PAGE_SIZE HUGE instead of 4 KiB.
# (s43, H200: cuda:0 decodes the same kernels 5.6% faster than rm:0 at ~165 W vs ~305 W.)
# e2e with it on rm:0, then tg128 rm:0 default / HUGE and cuda:0, Q6_K and Q8_0, two rounds,
# clocks and power sampled (nvidia-smi, read only).
set -u
out=${1:?usage: s44.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "e2e HUGE: $(HCQ_RM_MAP_HUGE=1 HCQ_TEST_DEVS='rm:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed|rror" | head -8 | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
HCQ_RM_MAP_HUGE=1 timeout 40 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 32 -r 1 --dev rm:0 2>&1 | head -8
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 50 >"$out/clk.csv" 2>&1 &
sp=$!
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 5 --dev rm:0 >/dev/null 2>&1
: >"$out/runs.txt"
for r in 1 2; do for ty in q6_k q8_0; do
    for v in "rm:0,X=0" "rm:0,HCQ_RM_MAP_HUGE=1" "cuda:0,X=0"; do
        d=${v%%,*}; e=${v#*,}
        a=$(date +%s.%N)
        x=$(env $e timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev $d 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
        b=$(date +%s.%N)
        echo "$a $b r$r $ty $d [$e] $x" >>"$out/runs.txt"
    done
done; done
kill $sp 2>/dev/null
python3 bench/final/clk_runs.py "$out/clk.csv" "$out/runs.txt" || cat "$out/runs.txt"
echo "-- bench copy d2d rm:0 default vs HUGE"
for e in X=0 HCQ_RM_MAP_HUGE=1; do
    env $e timeout 60 build/nvhcq bench copy --devs rm:0 2>&1 | grep -iE "d2d" | grep -E "64 MiB|1 GiB|256 MiB" | cut -c1-110 | head -4
done
echo "== end $(($(date +%s) - t0)) s"

#!/bin/bash
# s43.sh OUT - session 8: the q8 mat-vec as one kernel per weight type (default) against the
# switching body for every launch (NVHCQ_MVQ_TYPED=0), tg128 rm:0 on Q6_K, Q4_K, Q8_0, Q4_0,
# two rounds alternating, with cuda:0 on Q6_K beside them and the SM/memory clocks sampled
# (nvidia-smi, read only) per run; e2e on rm:0 and cuda:0 first.
set -u
out=${1:?usage: s43.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "e2e: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "matvec: $(HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/test_llm_matvec 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0 q4_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 50 >"$out/clk.csv" 2>&1 &
sp=$!
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 5 --dev rm:0 >/dev/null 2>&1
: >"$out/runs.txt"
for r in 1 2; do for ty in q6_k q4_k q8_0 q4_0; do
    vs="rm:0,X=0 rm:0,NVHCQ_MVQ_TYPED=0"
    [ $ty = q6_k ] && vs="$vs cuda:0,X=0 cuda:0,NVHCQ_MVQ_TYPED=0"
    for v in $vs; do
        d=${v%%,*}; e=${v#*,}
        a=$(date +%s.%N)
        x=$(env $e timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev $d 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
        b=$(date +%s.%N)
        echo "$a $b r$r $ty $d [$e] $x" >>"$out/runs.txt"
    done
done; done
kill $sp 2>/dev/null
python3 bench/final/clk_runs.py "$out/clk.csv" "$out/runs.txt" || cat "$out/runs.txt"
echo "-- profile"
timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --profile --dev rm:0 2>&1 | grep -E "^\| [a-z]|profile:" | head -12
echo "== end $(($(date +%s) - t0)) s"

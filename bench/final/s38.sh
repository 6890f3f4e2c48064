#!/bin/bash
# s38.sh OUT - session 8: why cuda:0 decodes faster than rm:0 on the H200 (s37: Q6_K tg128 1542 vs
# 1456, Q4_K_M 1540 vs 1516; Q8_0 1442 vs 1476). Same kernels, so the launch path, the
# memory mapping or the clocks. tg128 A/B, alternating, two rounds, with the SM/memory clocks
# sampled (nvidia-smi, read only) during each run: rm:0 default; cuda:0; rm:0 with RM's own page
# size for the GPU mapping (HCQ_RM_MAP_PAGE=0; the default maps with 4 KiB PTEs); rm:0 with the
# PDL dependent released by the program (PB_PDL_PRE_EXIT=prog, CUDA's QMDs); rm:0 with CUDA's
# producer membar (PB_PDL_MEMBAR=1 PB_PDL_TASK_CHASING=0). Then e2e under the two new switches
# and the in-situ profiles of rm:0 and cuda:0.
set -u
out=${1:?usage: s38.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms 50 >"$out/clk.csv" 2>&1 &
sp=$!
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 5 --dev rm:0 >/dev/null 2>&1
: >"$out/runs.txt"
for r in 1 2; do for ty in q6_k q4_k q8_0; do
    for v in "rm:0 X=0" "cuda:0 X=0" "rm:0 HCQ_RM_MAP_PAGE=0" "rm:0 PB_PDL_PRE_EXIT=prog" "rm:0 PB_PDL_MEMBAR=1 PB_PDL_TASK_CHASING=0"; do
        d=${v%% *}; e=${v#* }
        a=$(date +%s.%N)
        x=$(env $e timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev $d 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
        b=$(date +%s.%N)
        echo "$a $b r$r $ty $d [$e] $x" >>"$out/runs.txt"
    done
done; done
kill $sp 2>/dev/null
python3 bench/final/clk_runs.py "$out/clk.csv" "$out/runs.txt" || cat "$out/runs.txt"
for e in HCQ_RM_MAP_PAGE=0 PB_PDL_PRE_EXIT=prog; do
    echo "e2e [$e]: $(env $e HCQ_TEST_DEVS=rm:0 timeout 120 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
done
for d in rm:0 cuda:0; do
    echo "-- profile $d"
    timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --profile --dev $d 2>&1 | grep -E "^\| [a-z]|profile:" | head -12
done
echo "== end $(($(date +%s) - t0)) s"

#!/bin/bash
# s29.sh OUT - prepared in session 6, not run yet: the evict-first weight loads
# (NVHCQ_MVQ=ef: weights leave L2 first, so kernel code, x, y and the KV cache stay there; ncu
# showed the decode attention waiting on instruction fetch) on the GPU (unit test), then tg128
# A/B against the default and p1 with PDL off (the rm default since session 6) and on, same
# call, interleaved; then ncu's no_instruction / long_scoreboard stalls with and without ef.
set -u
out=${1:?usage: s29.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 120 build/tests/test_llm_matvec 2>&1 | grep -E "q8_ef|FAIL|passed" | grep -v "^    cpu"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for round in 1 2; do for ty in q6_k q4_k q8_0; do
    for v in "NVHCQ_PDL=0" "NVHCQ_PDL=0 NVHCQ_MVQ=ef" "NVHCQ_PDL=1" "NVHCQ_PDL=1 NVHCQ_MVQ=ef" "NVHCQ_PDL=1 NVHCQ_MVQ=p1"; do
        r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
        echo "r$round $ty [$v] $r"
    done
done; done
M="regex:smsp__average_warps_issue_stalled_(no_instruction|long_scoreboard|short_scoreboard|wait)_per_issue_active\.ratio,gpu__time_duration.sum"
for v in "X=0" "NVHCQ_MVQ=ef"; do
    echo "== ncu $v"
    env $v timeout 200 /usr/local/cuda/bin/ncu --cache-control none --target-processes all -k "regex:k_llm_(matvec_q8|attn_decode)" -s 500 -c 5 --metrics "$M" \
        build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 16 -r 1 --dev cuda:0 2>&1 | awk '/k_llm_/{print "--", $1, $2} /stalled|duration/{print "   ", $1, $NF}' | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//'
done

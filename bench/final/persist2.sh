#!/bin/bash
# persist2.sh OUT - one device call: the persistent decode kernel's A/B variants on Q6_K
# (per-kernel, persistent, one CTA per SM, barriers only) with the per-phase profile, and,
# when a branch tree is carried in .wt_pa, the prefill attention kernel timed by ncu (main vs
# branch) plus pp512.
set -u
out=${1:?usage: persist2.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
[ -d .wt_pa ] && { (cd .wt_pa && make -j16 CUARCH=90 >"$out/build_pa.log" 2>&1) || echo "branch build failed"; }
echo "== build $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
f=/tmp/m_q6_k.gguf
$B/nvhcq gen-model --preset llama-3.2-1b --type q6_k --vocab $V -o $f >/dev/null 2>&1 || echo "gen failed"
HCQ_TEST_DEVS="rm:0" timeout 100 $B/tests/test_llm_e2e persistent_vs_per_kernel 2>&1 | grep -E "rm:0|ok|FAIL"
for v in ${VARIANTS:-0 1 1cta empty 0 1 1cta}; do # 0: per-kernel (default)
    e="NVHCQ_PERSIST=$v"
    [ $v = empty ] && e="NVHCQ_PERSIST=1 NVHCQ_PERSIST_EMPTY=1"
    echo "-- $e"
    env $e timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error|warn" | tail -2
done
for v in 1 1cta; do
    echo "-- profile NVHCQ_PERSIST=$v"
    NVHCQ_PERSIST=$v timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 1 --profile --dev rm:0 2>&1 | tail -9
done
if [ -d .wt_pa ]; then
    for r in main branch; do
        b=$B/nvhcq; [ $r = branch ] && b=.wt_pa/build/nvhcq
        echo "-- ncu k_llm_attn pp512 $r"
        timeout 120 ncu --kernel-name k_llm_attn --metrics gpu__time_duration.sum --csv $b llm-bench -m $f -p 512 -n 0 -r 1 --dev cuda:0 2>/dev/null |
            awk -F'","' '/gpu__time_duration/ {gsub(/"/,"",$NF); s+=$NF; n++} END {printf "k_llm_attn: %d launches, %.1f us total (ns unit assumed)\n", n, s/1e3}'
    done
    for r in main branch main branch; do
        b=$B/nvhcq; [ $r = branch ] && b=.wt_pa/build/nvhcq
        echo "-- pp512 $r"
        timeout 60 $b llm-bench -m $f -p 512 -n 0 -r 5 --dev rm:0 2>&1 | grep -E "pp|error"
    done
fi
echo "all done after $(($(date +%s) - t0)) s"

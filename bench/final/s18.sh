#!/bin/bash
# s18.sh OUT - session 6, H100: (1) the shared-memory ring mat-vec (NVHCQ_MVQ=tma) against the
# register body on the GPU (unit test, e2e logits), (2) tg128 A/B on gen-model files, same call,
# interleaved: default | carve-out 228 | one CTA per SM (register body) | tma | tma without PDL,
# (3) s17's stale-latch and producer-membar checks last (they hang a channel on purpose).
set -u
out=${1:?usage: s18.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
echo "== unit: every mat-vec body on rm:0 and cuda:0"
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 120 build/tests/test_llm_matvec 2>&1 | grep -E "q8|FAIL|passed" | grep -v "^    cpu"
echo "== e2e with tma"
NVHCQ_MVQ=tma HCQ_SM_CARVEOUT_KIB=228 HCQ_TEST_DEVS="rm:0" timeout 120 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed|ok " | tail -12
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
echo "== tg128 A/B rm:0 (-r 3)"
for round in 1 2; do
    for ty in q6_k q4_k q8_0; do
        for v in "X=0" "HCQ_SM_CARVEOUT_KIB=228" "NVHCQ_MVQ_CPS=1" "NVHCQ_MVQ=tma HCQ_SM_CARVEOUT_KIB=228" \
                 "NVHCQ_MVQ=tma" "NVHCQ_MVQ=tma HCQ_SM_CARVEOUT_KIB=228 NVHCQ_PDL=0"; do
            r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
            echo "r$round $ty [$v] $r"
        done
    done
done
echo "== cuda:0 tma vs default (Q6_K)"
for v in "X=0" "NVHCQ_MVQ=tma"; do
    r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev cuda:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "cuda $v $r"
done
echo "== s17 (stale latches, producer membar)"
bash bench/final/s17.sh "$out/s17" 2>&1 | tail -40
dmesg 2>/dev/null | grep -iE "xid|nvrm" | tail -8

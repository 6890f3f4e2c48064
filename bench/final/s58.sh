#!/bin/bash
# s58.sh OUT - session 9's last call (~7 min, H200): the whole `make test-gpu` on the session's
# final tree (offline vocab suites skipped), then tg128 at depth 0 and 4096 with
# k_llm_attn_decode_long (default) vs NVHCQ_AD_LONG=0, Q6_K and Q8_0, on the H200. Logs a_*.
set -u
out=${1:?usage: s58.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 420 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
grep -E "FAIL|passed|failed" "$out/a_test_gpu.txt" | tail -8
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for ty in q6_k q8_0; do for v in NVHCQ_AD_LONG=0 X=0; do
    left=$((590 - ($(date +%s) - t0)))
    [ $left -lt 30 ] && break
    x=$(env $v timeout $left build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -d 0,4096 -r 2 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty [$v] d0, d4096: $x"
done; done | tee "$out/a_tg.txt"
echo "== end $(($(date +%s) - t0)) s"

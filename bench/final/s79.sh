#!/bin/bash
# s79.sh OUT - session 12 (either GPU; carry .commit .dev): decode attention with the cache rows
# of earlier steps requested before the PDL wait (.dev/attn-early.patch on the tree) against
# the tree: GPU tests of the patched build (attention, e2e, real-model rows; rm:0 cuda:0), tg128
# alternating on gen-model files (also at depth 512: positions 512..639, the same path with
# several rounds), decode profiles of Q4_K. ~5 min. Logs a_*.
set -u
out=${1:?usage: s79.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
rm -rf /tmp/v_ae && mkdir -p /tmp/v_ae && tar --exclude=./build --exclude=./.anchor -cf - . | tar -xf - -C /tmp/v_ae
(cd /tmp/v_ae && patch -p1 -s <.dev/attn-early.patch) || { echo "patch failed"; exit 1; }
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
(cd /tmp/v_ae && make -j16 CUARCH=90 >/tmp/v_ae.log 2>&1) || { tail -20 /tmp/v_ae.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
echo "builds done ($(($(date +%s) - t0)) s)"
for t in test_llm_attn_decode test_llm_e2e test_llm_real test_llm_valid; do
    (cd /tmp/v_ae && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$out/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$out"/t_*.txt | tr '\n' ' ')" | tee "$out/a_tests.txt"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
declare -A BIN=([base]=build/nvhcq [ae]=/tmp/v_ae/build/nvhcq)
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for r in 1 2; do for ty in q6_k q8_0 q4_k; do for v in base ae; do
    x=$(timeout 40 ${BIN[$v]} llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [$v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
for v in base ae cuda; do
    b=${BIN[$v]:-/tmp/v_ae/build/nvhcq}; d=rm:0; [ $v = cuda ] && d=cuda:0
    x=$(timeout 60 $b llm-bench -m /tmp/m_q4_k.gguf -p 0 -n 128 -d 512 -r 2 --dev $d 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "q4_k d512 [$v $d] tg128: $x"
done 2>&1 | tee "$out/a_tg_d512.txt"
for v in base ae; do
    echo "-- profile q4_k [$v]"
    timeout 60 ${BIN[$v]} llm-bench -m /tmp/m_q4_k.gguf -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done >"$out/a_profile.txt" 2>&1
grep -E "profile|tg128|attn|o\+" "$out/a_profile.txt"
echo "== end $(($(date +%s) - t0)) s"

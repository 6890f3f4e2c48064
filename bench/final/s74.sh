#!/bin/bash
# s74.sh OUT - session 11's last call (~2.5 min, either GPU; carry .dev (e3.patch) and .commit): the
# mat-vec prologue as kept - e1 (one division per block in k_llm_mvq_block, s73: +7.6-8.3%) without
# e2 (s73: neutral to -2% alone, dropped) - against e1 + e3 (the NaN/Inf flag as one FMA per value
# instead of a subtract, compare and or). Two builds, tg128 alternating on gen-model files, then
# test_llm_matvec / test_llm_e2e of the e1 + e3 tree on rm:0. Logs a_*.
set -u
out=${1:?usage: s74.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
rm -rf /tmp/v_e1 && mkdir -p /tmp/v_e1 && tar --exclude=./build --exclude=./.anchor -cf - . | tar -xf - -C /tmp/v_e1
(cd /tmp/v_e1 && patch -R -p1 -s <.dev/e3.patch) || { echo "e1 patch failed"; exit 1; }
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
(cd /tmp/v_e1 && make -j16 CUARCH=90 >/tmp/v_e1.log 2>&1) || { tail -20 /tmp/v_e1.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
echo "builds done ($(($(date +%s) - t0)) s)"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
declare -A BIN=([e1]=/tmp/v_e1/build/nvhcq [e1e3]=build/nvhcq)
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for r in 1 2; do for ty in q6_k q8_0 q4_k; do for v in e1 e1e3; do
    x=$(timeout 40 ${BIN[$v]} llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [$v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
for t in test_llm_matvec test_llm_e2e; do
    HCQ_TEST_DEVS='rm:0' timeout 60 build/tests/$t >"$out/a_$t.txt" 2>&1
    echo "$t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$out"/a_test_*.txt | tr '\n' ' ')"
echo "== end $(($(date +%s) - t0)) s"

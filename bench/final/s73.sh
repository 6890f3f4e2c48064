#!/bin/bash
# s73.sh OUT - session 11 (~6 min, either GPU; carry .dev (the two patches) and .commit): the decode
# mat-vec prologue, two changes measured against the tree before them, as three builds in one call:
# base (both reverse-applied), e2 (x of a thread's two blocks loaded before either is used), all
# (+ e1: one division per block in k_llm_mvq_block instead of one per value). Correctness of the
# new tree (test_llm_matvec, test_llm_e2e on rm:0), then tg128 alternating on gen-model files and
# a profile of Q8_0 per build. Logs a_*.
set -u
out=${1:?usage: s73.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
for v in base e2; do
    rm -rf /tmp/v_$v && mkdir -p /tmp/v_$v && tar --exclude=./build --exclude=./.anchor -cf - . | tar -xf - -C /tmp/v_$v
done
(cd /tmp/v_base && patch -R -p1 -s <.dev/e1.patch && patch -R -p1 -s <.dev/e2.patch) || { echo "base patch failed"; exit 1; }
(cd /tmp/v_e2 && patch -R -p1 -s <.dev/e1.patch) || { echo "e2 patch failed"; exit 1; }
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
for v in base e2; do (cd /tmp/v_$v && make -j16 CUARCH=90 >/tmp/v_$v.log 2>&1) || { tail -20 /tmp/v_$v.log; exit 1; }; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
echo "builds done ($(($(date +%s) - t0)) s)"
for t in test_llm_matvec test_llm_e2e; do
    HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/$t >"$out/a_$t.txt" 2>&1
    echo "$t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$out"/a_test_*.txt | tr '\n' ' ') ($(($(date +%s) - t0)) s)"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
declare -A BIN=([base]=/tmp/v_base/build/nvhcq [e2]=/tmp/v_e2/build/nvhcq [all]=build/nvhcq)
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for r in 1 2; do for ty in q6_k q8_0 q4_k; do for v in base e2 all; do
    x=$(timeout 60 ${BIN[$v]} llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [$v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
for v in base all; do
    echo "-- profile q8_0 [$v]"
    timeout 60 ${BIN[$v]} llm-bench -m /tmp/m_q8_0.gguf -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -14
done >"$out/a_profile.txt" 2>&1
grep -E "down|gate|qkv|o\+" "$out/a_profile.txt"
echo "== end $(($(date +%s) - t0)) s"

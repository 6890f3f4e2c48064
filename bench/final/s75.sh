#!/bin/bash
# s75.sh OUT - **the next session's first call** (~9 min, either GPU; carry .anchor and .commit):
# three more changes of the decode mat-vec, prepared in session 11 without device time and kept
# as patches (bench/final/patches/, applied in order): A = q8_store_block computes
# k_llm_mvq_block's quants with fewer instructions, the same values (one cvt.rni per value, PRMT
# packing, the sum by dp4a; the prologue's PTX 333 -> 261 instructions in k_llm_matvec_q8_q8_0);
# B = two threads per block where k <= 2048 (half the threads were idle in that prologue);
# C = split pairs for one-row launches of >= 4 passes (the FFN down projection: two warps share
# two rows, half the passes each, sums added in a fixed order). Three builds: base (the tree),
# ab, abc. While llama.cpp builds: correctness of ab and abc (test_llm_matvec runs the typed
# kernels at k 8192 where C engages; test_llm_e2e compares with cpu). Then tg128 alternating on
# gen-model files, and the same-file comparison with base and with abc. Logs a_*.
set -u
out=${1:?usage: s75.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
for v in ab abc; do
    rm -rf /tmp/v_$v && mkdir -p /tmp/v_$v && tar --exclude=./build --exclude=./.anchor -cf - . | tar -xf - -C /tmp/v_$v
done
P=bench/final/patches
(cd /tmp/v_ab && patch -p1 -s <$P/s75-a-quant-store.patch && patch -p1 -s <$P/s75-b-half-blocks.patch) ||
    { echo "patch ab failed"; exit 1; }
(cd /tmp/v_abc && patch -p1 -s <$P/s75-a-quant-store.patch && patch -p1 -s <$P/s75-b-half-blocks.patch &&
    patch -p1 -s <$P/s75-c-split-pairs.patch) || { echo "patch abc failed"; exit 1; }
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
for v in ab abc; do (cd /tmp/v_$v && make -j8 CUARCH=90 >/tmp/v_$v.log 2>&1) || { tail -20 /tmp/v_$v.log; exit 1; }; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
echo "builds done ($(($(date +%s) - t0)) s)"
for v in ab abc; do for t in test_llm_matvec test_llm_e2e; do
    (cd /tmp/v_$v && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$out/t_${v}_$t.txt" 2>&1
    echo "$v $t rc=$?"
done; done
echo "tests: $(grep -hE "FAIL|passed" "$out"/t_*.txt | tr '\n' ' ')" | tee "$out/a_tests.txt"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
wait $bp
tail -1 "$out/llbuild.log"
declare -A BIN=([base]=build/nvhcq [ab]=/tmp/v_ab/build/nvhcq [abc]=/tmp/v_abc/build/nvhcq)
build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 128 -r 3 --dev rm:0 >/dev/null 2>&1 # warm
for r in 1 2; do for ty in q6_k q8_0 q4_k; do for v in base ab abc; do
    x=$(timeout 40 ${BIN[$v]} llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty r$r [$v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
for v in base abc; do
    mkdir -p /tmp/vs_$v && { [ "$v" = base ] || ln -sfn /tmp/vs_base/models /tmp/vs_$v/models; }
    c=$(cat .commit 2>/dev/null); [ "$v" = abc ] && c="$c+s75-a+b+c"
    NVHCQ=${BIN[$v]} NVHCQ_COMMIT="$c" DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=2 \
        timeout 200 bash bench/vs-llamacpp.sh $B /tmp/vs_$v >"$out/vs_$v.log" 2>&1
    cp /tmp/vs_$v/vs-llamacpp.md "$out/a_vs_$v.md"; cp /tmp/vs_$v/vs-llamacpp.json "$out/a_vs_$v.json"
    echo "-- same files [$v]"; grep -E "tg128|pp512" /tmp/vs_$v/vs-llamacpp.md
done
echo "== end $(($(date +%s) - t0)) s"

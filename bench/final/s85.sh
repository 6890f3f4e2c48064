#!/bin/bash
# s85.sh OUT - **the next session's first call** (either GPU; carry .anchor .commit; ~8 min):
# (1) Q4_K mat-vec tasks of 64 values (bench/final/patches/s85-q4k-tasks64.patch, prepared in
# session 12 without device time: a lane loads a whole 64-value group of a super-block - two
# 16-byte loads of quants instead of one - so a pass of Q4_K carries Q8_0R's bytes; Q4_K's
# down projection streamed 1.1 TB/s and gate|up 1.7 against Q8_0's 1.9 / 2.3; compiled, run on
# cpu/emu only, the device code never ran) against the tree: its GPU tests (test_llm_matvec runs
# every kernel that reads Q4_K, test_llm_e2e, test_llm_real) while llama.cpp builds, tg128
# alternating on the gen-model q4_k file and the llama-quantize Q4_K_M file, profiles;
# (2) the same-file comparison with the tree, five types (session 12's last rows predate the
# Q8_0 two-pass default; Q4_0 / Q5_K_M last ran in session 8), and the patch's Q4_K_M row. Apply with `patch -p1 < FILE` where it wins and its tests pass.
set -u
out=${1:?usage: s85.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
rm -rf /tmp/v_q4 && mkdir -p /tmp/v_q4 && tar --exclude=./build --exclude=./.anchor -cf - . | tar -xf - -C /tmp/v_q4
(cd /tmp/v_q4 && patch -p1 -s <bench/final/patches/s85-q4k-tasks64.patch) || { echo "patch failed"; exit 1; }
make -j8 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
(cd /tmp/v_q4 && make -j8 CUARCH=90 >/tmp/v_q4.log 2>&1) || { tail -20 /tmp/v_q4.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for t in test_llm_matvec test_llm_e2e test_llm_real; do
    (cd /tmp/v_q4 && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$out/t_$t.txt" 2>&1
    echo "q4 $t rc=$?"
done
grep -h "q4k" "$out/t_test_llm_matvec.txt" | grep -v "^    cpu" | head -12
echo "tests: $(grep -hE "FAIL|passed" "$out"/t_*.txt | tr '\n' ' ')" | tee "$out/a_tests.txt"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
build/nvhcq gen-model --preset llama-3.2-1b --type q4_k --vocab $V -o /tmp/m_q4_k.gguf >/dev/null 2>&1 || echo "gen failed"
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
declare -A BIN=([base]=build/nvhcq [q4]=/tmp/v_q4/build/nvhcq)
for v in base q4; do
    mkdir -p /tmp/vs_$v && { [ "$v" = base ] || ln -sfn /tmp/vs_base/models /tmp/vs_$v/models; }
    c=$(cat .commit 2>/dev/null); [ "$v" = q4 ] && c="$c+s85-q4k-tasks64"
    T="Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M"; [ "$v" = q4 ] && T="Q4_K_M" # the patch reads Q4_K only
    NVHCQ=${BIN[$v]} NVHCQ_COMMIT="$c" DEVS="rm:0" TYPES="$T" REPS=3 \
        timeout 200 bash bench/vs-llamacpp.sh $B /tmp/vs_$v >"$out/vs_$v.log" 2>&1
    cp /tmp/vs_$v/vs-llamacpp.md "$out/a_vs_$v.md"; cp /tmp/vs_$v/vs-llamacpp.json "$out/a_vs_$v.json"
    echo "-- same files [$v]"; grep -E "tg128|pp512" /tmp/vs_$v/vs-llamacpp.md
done
QM=$(ls /tmp/vs_base/models/*Q4_K_M*.gguf | head -1)
for r in 1 2; do for f in $QM /tmp/m_q4_k.gguf; do for v in base q4; do
    x=$(timeout 40 ${BIN[$v]} llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$(basename $f) r$r [$v] tg128: $x"
done; done; done 2>&1 | tee "$out/a_tg.txt"
for v in base q4; do
    echo "-- profile Q4_K_M [$v]"
    timeout 60 ${BIN[$v]} llm-bench -m $QM -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done >"$out/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$out/a_profile.txt"
echo "== end $(($(date +%s) - t0)) s"

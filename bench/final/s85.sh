#!/bin/bash
# s85.sh OUT - **the next session's first call** (either GPU; carry .anchor .commit; ~8-9 min):
# (1) Q4_K mat-vec tasks of 64 values (bench/final/patches/s85-q4k-tasks64.patch, prepared in
# session 12 without device time: a lane loads a whole 64-value group of a super-block - two
# 16-byte loads of quants instead of one - so a pass of Q4_K carries Q8_0R's bytes; Q4_K's
# down projection streamed 1.1 TB/s and gate|up 1.7 against Q8_0's 1.9 / 2.3; compiled, run on
# cpu/emu only, the device code never ran) against the tree: its GPU tests (test_llm_matvec runs
# every kernel that reads Q4_K, test_llm_e2e, test_llm_real) while llama.cpp builds, tg128
# alternating on the gen-model q4_k file and the llama-quantize Q4_K_M file, profiles;
# (2) the same-file comparison with the tree, five types (session 12's last rows predate the
# Q8_0 two-pass default; Q4_0 / Q5_K_M last ran in session 8), and the patch's Q4_K_M row.
# Apply with `patch -p1 < FILE` where it wins and its tests pass. Pieces: lib.sh.
set -u
OUT=${1:?usage: s85.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
ll_build_bg
rm -rf /tmp/v_q4 && mkdir -p /tmp/v_q4 && tar --exclude=./build --exclude=./.anchor -cf - . | tar -xf - -C /tmp/v_q4
(cd /tmp/v_q4 && patch -p1 -s <bench/final/patches/s85-q4k-tasks64.patch) || { echo "patch failed"; exit 1; }
make -j8 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
(cd /tmp/v_q4 && make -j8 CUARCH=90 >/tmp/v_q4.log 2>&1) || { tail -20 /tmp/v_q4.log; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
for t in test_llm_matvec test_llm_e2e test_llm_real; do
    (cd /tmp/v_q4 && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$OUT/t_$t.txt" 2>&1
    echo "q4 $t rc=$?"
done
grep -h "q4k" "$OUT/t_test_llm_matvec.txt" | grep -v "^    cpu" | head -12
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
gen_models q4_k
ll_wait || exit 1
declare -A BIN=([base]=build/nvhcq [q4]=/tmp/v_q4/build/nvhcq)
c=$(cat .commit 2>/dev/null)
TYPES="Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M" REPS=3 vs_run build/nvhcq /tmp/vs_base "$c"
mkdir -p /tmp/vs_q4 && ln -sfn /tmp/vs_base/models /tmp/vs_q4/models
TYPES="Q4_K_M" REPS=3 vs_run /tmp/v_q4/build/nvhcq /tmp/vs_q4 "$c+s85-q4k-tasks64" # the patch reads Q4_K only
for v in base q4; do echo "-- same files [$v]"; grep -E "tg128|pp512" "$OUT/a_vs_$v.md"; done
QM=$(ls /tmp/vs_base/models/*Q4_K_M*.gguf | head -1)
for r in 1 2; do for f in $QM /tmp/m_q4_k.gguf; do for v in base q4; do
    echo "$(basename $f) r$r [$v] tg128: $(tg_cell ${BIN[$v]} $f rm:0)"
done; done; done 2>&1 | tee "$OUT/a_tg.txt"
for v in base q4; do
    echo "-- profile Q4_K_M [$v]"
    timeout 60 ${BIN[$v]} llm-bench -m $QM -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
done >"$OUT/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"

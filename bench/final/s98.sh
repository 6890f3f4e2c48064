#!/bin/bash
# s98.sh OUT - session 14, third call (either GPU; carry .llqb .commit; ~6 min). Q4_0 rows read
# two groups per task (64 values, 36 B per lane and pass, half the passes; device code never run):
# q4w   = patches/s98-q40-tasks64.patch (k_llm_matvec_q8_q4_0: 112 registers, _w2: 117)
# q4w96 = patches/s98-q40-tasks64-maxnreg96.patch (the same, k_llm_matvec_q8_q4_0 under
#         __maxnreg__(96): 96 registers, no spills; _w2 as q4w)
# Why: Q4_0R's 18 B per lane and pass make it the most latency-bound repacked type (gate|up 1.8
# TB/s where Q8_0R's 34 B stream 2.35); s96's L2 prefetch of the next pass lost 5% (no registers,
# but evict-first lines in L2 do not live until the load). GPU tests, tg128 alternating on Q4_0
# (llama-quantize) and the gen-model q4_0 file, profiles.
set -u
OUT=${1:?usage: s98.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build q4w bench/final/patches/s98-q40-tasks64.patch || exit 1
variant_build q4w96 bench/final/patches/s98-q40-tasks64-maxnreg96.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q4_0
gen_models q4_0
for v in q4w q4w96; do for t in test_llm_matvec test_llm_e2e; do
    (cd /tmp/v_$v && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 120 build/tests/$t) >"$OUT/t_${v}_$t.txt" 2>&1
    echo "$v $t rc=$?"
done; done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
grep -h "FAIL" "$OUT"/t_*.txt | head -20
declare -A BIN=([base]=build/nvhcq [q4w]=/tmp/v_q4w/build/nvhcq [q4w96]=/tmp/v_q4w96/build/nvhcq)
for r in 1 2 3; do
    for f in /tmp/q/Q4_0.gguf /tmp/m_q4_0.gguf; do for v in base q4w q4w96; do
        echo "$(basename $f .gguf) r$r [$v] tg128: $(tg_cell ${BIN[$v]} $f rm:0)"
    done; done
done 2>&1 | tee "$OUT/a_tg.txt"
for v in base q4w q4w96; do profile_row ${BIN[$v]} /tmp/q/Q4_0.gguf Q4_0 $v; done >"$OUT/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"

#!/bin/bash
# s94.sh OUT - **the next session's first call** (either GPU; carry .llqb .commit; ~8 min; build
# .llqb first: bench/final/build_llqb.sh). Two prepared changes, device code never run:
# q4m = patches/s94-q4k-tasks64-maxnreg96.patch: Q4_K tasks of 64 values within 96 registers
#   (s85's patch + __maxnreg__(96) on k_llm_matvec_q8_q4k: 95 registers, no spills; the two-type
#   kernel stays at 115 as before). Why: s93's Nsight run (cuda:0, serialized launches) put s85's
#   body 10% ahead alone (gate|up 15.65 -> 14.05 us, instructions 6.04 M -> 4.47 M) while tg128
#   lost 2-3% in the PDL pipeline, where its 105 registers (93 before) delay the next launch's
#   CTAs - as the _w2 kernels did (session 12).
# q5 = patches/s95-q5k-qh-shift.patch: Q5_K's fifth bits from qh shifted once per task (same
#   quants; 24 fewer static instructions in k_llm_matvec_q8_q5k): Q5_K is the most
#   instruction-bound type (s93: 7.08 M instructions for gate|up, a warp issues every 6.3 cycles).
# GPU tests of both builds, tg128 alternating (Q4_K_M and gen-model q4_k: base / q4m; Q5_K_M:
# base / q5), profiles. Apply what wins with `patch -p1 < FILE`.
set -u
OUT=${1:?usage: s94.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build q4m bench/final/patches/s94-q4k-tasks64-maxnreg96.patch || exit 1
variant_build q5 bench/final/patches/s95-q5k-qh-shift.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q4_K_M Q5_K_M
gen_models q4_k
for v in q4m q5; do for t in test_llm_matvec test_llm_e2e; do
    (cd /tmp/v_$v && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 120 build/tests/$t) >"$OUT/t_${v}_$t.txt" 2>&1
    echo "$v $t rc=$?"
done; done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
declare -A BIN=([base]=build/nvhcq [q4m]=/tmp/v_q4m/build/nvhcq [q5]=/tmp/v_q5/build/nvhcq)
for r in 1 2; do
    for f in /tmp/q/Q4_K_M.gguf /tmp/m_q4_k.gguf; do for v in base q4m; do
        echo "$(basename $f .gguf) r$r [$v] tg128: $(tg_cell ${BIN[$v]} $f rm:0)"
    done; done
    for v in base q5; do echo "Q5_K_M r$r [$v] tg128: $(tg_cell ${BIN[$v]} /tmp/q/Q5_K_M.gguf rm:0)"; done
done 2>&1 | tee "$OUT/a_tg.txt"
for pv in "Q4_K_M base" "Q4_K_M q4m" "Q5_K_M base" "Q5_K_M q5"; do
    set -- $pv
    profile_row ${BIN[$2]} /tmp/q/$1.gguf $1 $2
done >"$OUT/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"

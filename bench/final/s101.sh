#!/bin/bash
# s101.sh OUT - session 14 (either GPU; carry .llqb .commit; ~8 min). Two prepared changes, device code
# never run, each against the base (467e87a: Q5_KR in):
# q4kr = patches/s101-q4kr.patch: Q4_K rows repacked lane-major like Q5_KR (s99: Q5_K_M +15%):
#        Q4_KR, tasks of 64 values, 36 B per lane and task (k_llm_matvec_q8_q4k 93 -> 109 registers).
# x2   = patches/s100-x2-q4_0-q8_0.patch (rebased on Q5_KR): Q4_0 / Q8_0 down projection and head
#        on two-groups-per-task kernels (s100.sh's question; s100 itself was not run).
# GPU tests of both, tg128 alternating (Q4_K_M, gen-model q4_k: base / q4kr; Q8_0, Q4_0: base /
# x2), profiles of q4kr.
set -u
OUT=${1:?usage: s101.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build q4kr bench/final/patches/s101-q4kr.patch || exit 1
variant_build x2 bench/final/patches/s100-x2-q4_0-q8_0.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q4_K_M Q8_0 Q4_0
gen_models q4_k
for t in test_llm_matvec test_llm_e2e test_llm_dequant test_llm_real; do
    (cd /tmp/v_q4kr && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$OUT/t_q4kr_$t.txt" 2>&1
    echo "q4kr $t rc=$?"
done
for t in test_llm_matvec test_llm_e2e; do
    (cd /tmp/v_x2 && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$OUT/t_x2_$t.txt" 2>&1
    echo "x2 $t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
grep -h -A3 "FAIL" "$OUT"/t_*.txt | head -30
echo "tests done $(($(date +%s) - T0)) s"
declare -A BIN=([base]=build/nvhcq [q4kr]=/tmp/v_q4kr/build/nvhcq [x2]=/tmp/v_x2/build/nvhcq)
for r in 1 2; do
    for f in /tmp/q/Q4_K_M.gguf /tmp/m_q4_k.gguf; do for v in base q4kr; do
        echo "$(basename $f .gguf) r$r [$v] tg128: $(tg_cell ${BIN[$v]} $f rm:0)"
    done; done
    for f in /tmp/q/Q8_0.gguf /tmp/q/Q4_0.gguf; do for v in base x2; do
        [ $(($(date +%s) - T0)) -gt 540 ] && break 3
        echo "$(basename $f .gguf) r$r [$v] tg128: $(tg_cell ${BIN[$v]} $f rm:0)"
    done; done
done 2>&1 | tee "$OUT/a_tg.txt"
for v in base q4kr; do
    [ $(($(date +%s) - T0)) -gt 560 ] && break
    profile_row ${BIN[$v]} /tmp/q/Q4_K_M.gguf Q4_K_M $v
done >"$OUT/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"

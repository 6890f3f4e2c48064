#!/bin/bash
# s99.sh OUT - session 14, fourth call (either GPU; carry .llqb .commit; ~6 min). Q5_K rows repacked
# lane-major (Q5_KR, patches/s99-q5kr.patch; device code never run): tasks of 64 values with Q6_KR's
# value map, every warp load one contiguous run (qh and the block head read by 2 and 4 lanes),
# 44 B per lane and task as in the file - a byte move in k_llm_rp_parts. Q5_K is the most
# instruction-bound type (s93) and Q5_K_M's gate|up streams 1.6 TB/s (Q6_KR's 2.27).
# GPU tests of the variant (matvec, e2e, dequant, real), tg128 alternating on Q5_K_M
# (llama-quantize) and the gen-model q5_k file, profiles.
set -u
OUT=${1:?usage: s99.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build q5r bench/final/patches/s99-q5kr.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q5_K_M
gen_models q5_k
for t in test_llm_matvec test_llm_e2e test_llm_dequant test_llm_real; do
    (cd /tmp/v_q5r && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t) >"$OUT/t_q5r_$t.txt" 2>&1
    echo "q5r $t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
grep -h -A3 "FAIL" "$OUT"/t_*.txt | head -30
declare -A BIN=([base]=build/nvhcq [q5r]=/tmp/v_q5r/build/nvhcq)
for r in 1 2 3; do
    for f in /tmp/q/Q5_K_M.gguf /tmp/m_q5_k.gguf; do for v in base q5r; do
        echo "$(basename $f .gguf) r$r [$v] tg128: $(tg_cell ${BIN[$v]} $f rm:0)"
    done; done
done 2>&1 | tee "$OUT/a_tg.txt"
for v in base q5r; do profile_row ${BIN[$v]} /tmp/q/Q5_K_M.gguf Q5_K_M $v; done >"$OUT/a_profile.txt" 2>&1
for v in base q5r; do echo "Q5_K_M [$v] pp512: $(timeout 60 ${BIN[$v]} llm-bench -m /tmp/q/Q5_K_M.gguf -p 512 -n 0 -r 2 --dev rm:0 2>&1 | grep -E "pp|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')"; done | tee "$OUT/a_pp.txt"
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"

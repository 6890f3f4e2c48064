#!/bin/bash
# s94q.sh OUT - s94.sh's A/B in the least time (session 13's last device seconds): the tree and
# patches/s94-q4k-tasks64-maxnreg96.patch, tg128 alternating on the llama-quantize Q4_K_M file,
# then the patched build's test_llm_matvec on rm:0 if time is left. Carry .llqb .commit.
set -u
OUT=${1:?usage: s94q.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build q4m bench/final/patches/s94-q4k-tasks64-maxnreg96.patch || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q4_K_M
declare -A BIN=([base]=build/nvhcq [q4m]=/tmp/v_q4m/build/nvhcq)
for r in 1 2; do for v in base q4m; do
    echo "Q4_K_M r$r [$v] tg128: $(tg_cell ${BIN[$v]} /tmp/q/Q4_K_M.gguf rm:0)"
done; done 2>&1 | tee "$OUT/a_tg.txt"
(cd /tmp/v_q4m && HCQ_TEST_DEVS='rm:0' timeout 100 build/tests/test_llm_matvec) >"$OUT/t_test_llm_matvec.txt" 2>&1
echo "q4m test_llm_matvec rc=$?: $(grep -hE "FAIL|passed" "$OUT/t_test_llm_matvec.txt" | tr '\n' ' ')"
echo "== end $(($(date +%s) - T0)) s"

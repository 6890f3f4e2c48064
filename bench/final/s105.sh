#!/bin/bash
# s105.sh OUT - the session's last tree (c693f1b: a7a0c23's kernels; Q4_KR / Q5_KR repack parts
# folded into one case, host code) on the GPU: the LLM tests on rm:0 and cuda:0 and one tg128 cell
# per llama-quantize file on rm:0 (either GPU; carry .llqb .commit; ~4 min).
set -u
OUT=${1:?usage: s105.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q4_K_M Q5_K_M Q8_0 Q4_0 Q6_K
for t in test_llm_e2e test_llm_real test_llm_matvec; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rc=$?"
done
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
grep -h -A3 "FAIL" "$OUT"/t_*.txt | head -20
for f in Q4_K_M Q5_K_M Q8_0 Q4_0 Q6_K; do echo "$f [c693f1b] tg128: $(tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"; done 2>&1 | tee "$OUT/a_tg.txt"
echo "== end $(($(date +%s) - T0)) s"

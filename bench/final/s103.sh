#!/bin/bash
# s103.sh OUT - session 14 (either GPU; carry .llqb .commit; ~5 min). Env A/B of the two-groups-per-
# task kernels on more launches (NVHCQ_MVQ_X2 bits 0x100: gate|up, 0x200: Q|K|V and O; default 0x0C:
# down and head only): Q8_0 all four, Q4_0 default / 0x20C (s98 measured its gate|up slower). The
# e2e test with every launch on them (0x30C) on rm:0; profiles of Q8_0 at the default and 0x10C.
set -u
OUT=${1:?usage: s103.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q8_0 Q4_0
NVHCQ_MVQ_X2=0x30C HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/test_llm_e2e >"$OUT/t_x2all_e2e.txt" 2>&1
echo "x2 0x30C test_llm_e2e rc=$? $(grep -E "passed" "$OUT/t_x2all_e2e.txt")"
for r in 1 2; do
    for x in 0x0C 0x10C 0x20C 0x30C; do echo "Q8_0 r$r [x2=$x] tg128: $(NVHCQ_MVQ_X2=$x tg_cell build/nvhcq /tmp/q/Q8_0.gguf rm:0)"; done
    for x in 0x0C 0x20C; do echo "Q4_0 r$r [x2=$x] tg128: $(NVHCQ_MVQ_X2=$x tg_cell build/nvhcq /tmp/q/Q4_0.gguf rm:0)"; done
done 2>&1 | tee "$OUT/a_tg.txt"
for x in 0x0C 0x10C; do NVHCQ_MVQ_X2=$x profile_row build/nvhcq /tmp/q/Q8_0.gguf Q8_0 "x2=$x"; done >"$OUT/a_profile.txt" 2>&1
NVHCQ_MVQ_X2=0x0C profile_row build/nvhcq /tmp/q/Q4_0.gguf Q4_0 "x2=0x0C" >>"$OUT/a_profile.txt" 2>&1
grep -E "profile|tg128|mv |attn" "$OUT/a_profile.txt"
echo "== end $(($(date +%s) - T0)) s"

#!/bin/bash
# s96.sh OUT - session 14, second call (either GPU; carry .llqb .commit; ~9 min). Two ideas for the
# per-launch cost of the decode mat-vecs, device code never run before:
# pf  = patches/s96-pf-rolling.patch: each warp also prefetches the pass after the one it has just
#       requested into L2 (cp.async.bulk.prefetch.L2, evict-first, lanes 0/1, one per row): DRAM
#       sees two passes per warp without the registers (Q4_0R 18 B per lane and pass streams
#       gate|up at 1.8 TB/s, Q8_0R's 34 B at 2.35).
# pfb = pf + pass 1 prefetched before the PDL wait (patches/s96-pfb-rolling-begin.patch).
# sf  = patches/s97-sf-self-fence.patch: the PDL producers (embed, mat-vecs, decode attention)
#       end with fence.acq_rel.gpu, run with PB_PDL_MEMBAR=0 (no completion membar in the QMD);
#       base0 = today's code with PB_PDL_MEMBAR=0 (unsafe: the ceiling; session 7 measured 2.2%).
# GPU tests of pf/pfb (test_llm_matvec, test_llm_e2e on rm:0 and cuda:0); test_llm_e2e on rm:0 of
# sf and base with PB_PDL_MEMBAR=0; tg128 rm:0 alternating on Q8_0, Q4_0, Q5_K_M (llama-quantize).
set -u
OUT=${1:?usage: s96.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
variant_build pf bench/final/patches/s96-pf-rolling.patch || exit 1
variant_build pfb bench/final/patches/s96-pfb-rolling-begin.patch || exit 1
variant_build sf bench/final/patches/s97-sf-self-fence.patch || exit 1
echo "builds done $(($(date +%s) - T0)) s"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
quant_files Q8_0 Q4_0 Q5_K_M
echo "quant done $(($(date +%s) - T0)) s"
for v in pf pfb; do for t in test_llm_matvec test_llm_e2e; do
    (cd /tmp/v_$v && HCQ_TEST_DEVS='rm:0 cuda:0' timeout 120 build/tests/$t) >"$OUT/t_${v}_$t.txt" 2>&1
    echo "$v $t rc=$?"
done; done
(cd /tmp/v_sf && PB_PDL_MEMBAR=0 HCQ_TEST_DEVS='rm:0' timeout 120 build/tests/test_llm_e2e) >"$OUT/t_sf0_e2e.txt" 2>&1
echo "sf PB_PDL_MEMBAR=0 test_llm_e2e rc=$?"
PB_PDL_MEMBAR=0 HCQ_TEST_DEVS='rm:0' timeout 120 build/tests/test_llm_e2e >"$OUT/t_base0_e2e.txt" 2>&1
echo "base PB_PDL_MEMBAR=0 test_llm_e2e rc=$?"
echo "tests: $(grep -hE "FAIL|passed" "$OUT"/t_*.txt | tr '\n' ' ')" | tee "$OUT/a_tests.txt"
echo "tests done $(($(date +%s) - T0)) s"
declare -A BIN=([base]=build/nvhcq [pf]=/tmp/v_pf/build/nvhcq [pfb]=/tmp/v_pfb/build/nvhcq [sf0]=/tmp/v_sf/build/nvhcq
    [base0]=build/nvhcq)
cell() { # VARIANT FILE
    if [ "$1" = sf0 ] || [ "$1" = base0 ]; then PB_PDL_MEMBAR=0 tg_cell ${BIN[$1]} "$2" rm:0; else tg_cell ${BIN[$1]} "$2" rm:0; fi
}
for r in 1 2; do
    for f in Q8_0 Q4_0 Q5_K_M; do for v in base pf pfb sf0 base0; do
        [ $(($(date +%s) - T0)) -gt 560 ] && break 3
        [ $r = 2 ] && [ $v = base0 ] && continue
        echo "$f r$r [$v] tg128: $(cell $v /tmp/q/$f.gguf)"
    done; done
done 2>&1 | tee "$OUT/a_tg.txt"
echo "== end $(($(date +%s) - T0)) s"

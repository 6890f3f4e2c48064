#!/bin/bash
# s67.sh OUT - session 10 (nvidia-h100-x1, carry .commit; ~3 min): s66's TMA GEMM ran on cuda:0
# (98-103% of cuBLAS at 4096^3 / 8192^3) but faulted on rm:0 (Xid 13, multiple warp errors):
# the kernel reads its tensor maps from parameter space, whose generic address sm_90 code forms
# from some cbuf0 slot rm does not fill. Here: the SASS (cuobjdump) constant-bank offsets the
# TMA kernel reads, the lines around its TMA instructions, then one TMA test on rm:0 per
# candidate slot with cbuf0's own address (+0 and +0x210) written there (PB_CBUF0_SELF).
set -u
out=${1:?usage: s67.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
CU=build/cubin/k_gemm_wgmma_tma.sm_90a.cubin
OBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
$OBJ -sass -fun k_gemm_wgmma_f16_nt_tma $CU >"$out/a_sass_tma.txt" 2>&1
$OBJ -sass -fun k_gemm_wgmma_f16_nt build/cubin/k_gemm_wgmma.sm_90a.cubin >"$out/sass_plain.txt" 2>&1
echo "cbuf0 offsets read (tma):"; grep -o "c\[0x0\]\[0x[0-9a-f]*\]" "$out/a_sass_tma.txt" | sort | uniq -c | tee "$out/a_offsets.txt"
echo "cbuf0 offsets read (plain):"; grep -o "c\[0x0\]\[0x[0-9a-f]*\]" "$out/sass_plain.txt" | sort | uniq -c
grep -n -B6 -A2 "UTMALDG\|UBLKCP\|UTMAPF" "$out/a_sass_tma.txt" | head -60 | tee "$out/a_tma_lines.txt"
cands=$(grep -o "c\[0x0\]\[0x[0-9a-f]*\]" "$out/a_sass_tma.txt" | sed 's/.*\[\(0x[0-9a-f]*\)\]/\1/' | sort -u | \
    while read o; do [ $((o)) -lt $((0x210)) ] && [ $((o)) -ge $((0x30)) ] && echo $o; done)
echo "candidates: $cands"
for o in $cands; do for add in 0 0x210; do
    PB_CBUF0_SELF=$o:$add timeout 60 build/tests/hcq_suite --dev rm:0 kernel_gemm_wgmma_f16_nt_tma >"$out/t.txt" 2>&1
    echo "PB_CBUF0_SELF=$o:$add -> $(grep -E "passed" "$out/t.txt")"
done; done 2>&1 | tee "$out/a_try.txt"
dmesg 2>/dev/null | grep -ciE "xid"

#!/bin/bash
# s123.sh OUT - session 16: the device -> host copy kernel on compute queues only (copy queues keep
# the copy engine: s122's Xid 13). test_llm_attn_decode twice on cuda:0 + rm:0, the hcq suite on rm:0
# (--klog), test_llm_e2e on rm:0, tg128 Q8_0 base vs PB_D2H=ce.
set -u
OUT=${1:?usage: s123.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
(quant_files Q8_0 >"$OUT/quant.log" 2>&1) &
QP=$!
for i in 1 2; do
    HCQ_TEST_DEVS='cuda:0 rm:0' timeout 120 build/tests/test_llm_attn_decode >"$OUT/t_ad_$i.txt" 2>&1
    echo "test_llm_attn_decode $i rc=$? $(grep -E 'rm:0 k_llm|Xid|FAIL' "$OUT/t_ad_$i.txt" | head -3 | cut -c1-120 | tr '\n' ' ')"
done
timeout 150 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/t_suite.txt" 2>&1
echo "hcq_suite rm:0 rc=$? $(tail -1 "$OUT/t_suite.txt")"
HCQ_TEST_DEVS='rm:0' timeout 150 build/tests/test_llm_e2e >"$OUT/t_e2e.txt" 2>&1
echo "test_llm_e2e rc=$? $(tail -1 "$OUT/t_e2e.txt")"
grep -h FAIL "$OUT"/t_*.txt | head
wait $QP
for r in 1 2; do
    echo "Q8_0 r$r [base] tg128: $(tg_cell build/nvhcq /tmp/q/Q8_0.gguf rm:0)"
    echo "Q8_0 r$r [ce] tg128: $(PB_D2H=ce tg_cell build/nvhcq /tmp/q/Q8_0.gguf rm:0)"
done 2>&1 | tee "$OUT/a_tg.txt"
echo "xid lines: $(dmesg | grep -c Xid)"
echo "== end $(($(date +%s) - T0)) s"

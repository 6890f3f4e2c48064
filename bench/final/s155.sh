#!/bin/bash
# s155.sh OUT - session 21; either GPU; carry .llqb .commit; ~4 min. s154 found the QMD field
# FREE_CTA_SLOTS_EMPTY_SM=1 (PB_QMD_FIELDS, every QMD) taking the graph of 300 empty kernels from
# 0.456 to 0.374 us/kernel on H200 - and 300 dependent 2-CTA/SM kernels from ~1.0 to 2.14 us (one
# CTA per SM?). Values 1..32 against base, alternating, every latency row; then tg128 Q8_0 with
# values 2 and 4 (the decode mat-vecs run two CTAs per SM); then the HCQ suite's chain, graph and
# dependent-launch tests under value 2.
set -u
OUT=${1:?usage: s155.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
L="$OUT/a_lat.txt"
lat() { lat_run "$@" | grep -v -E "copy_to|signal"; } # NAME ENV...: lib.sh
lat base NVHCQ_X=0
for v in 1 2 4 32; do
    lat "free=$v" PB_QMD_FIELDS=FREE_CTA_SLOTS_EMPTY_SM=$v
    lat base NVHCQ_X=0
done
echo "== lat done $(($(date +%s) - T0)) s"
quant_files Q8_0 >"$OUT/a_quant.txt" 2>&1
F=/tmp/q/Q8_0.gguf
for r in 1 2; do
    echo "Q8_0 r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q8_0 r$r [free=2] tg128: $(env_cell PB_QMD_FIELDS=FREE_CTA_SLOTS_EMPTY_SM=2)"
    echo "Q8_0 r$r [free=4] tg128: $(env_cell PB_QMD_FIELDS=FREE_CTA_SLOTS_EMPTY_SM=4)"
done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
PB_QMD_FIELDS=FREE_CTA_SLOTS_EMPTY_SM=2 timeout 120 build/tests/hcq_suite --dev rm:0 --klog exec_ graphs dep_wait \
    kernel_axpb kernel_dep_step update_copy prune >"$OUT/a_suite.txt" 2>&1
echo "suite free=2 rc=$? $(grep -E "FAIL|passed" "$OUT/a_suite.txt" | tr '\n' ' ' | cut -c1-300)"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"

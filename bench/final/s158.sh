#!/bin/bash
# s158.sh OUT - prepared in session 21 for the next GPU session (not yet run); either GPU; carry
# .commit; ~8 min. Issue 13's graph row: FREE_CTA_SLOTS_EMPTY_SM (engine.md §2.1, bench/results/
# nvidia-h100/2026-11-27-s21-free-cta-slots.md). (1) What the faulting kernels were given under
# PB_QMD_FREE_CTA_SLOTS=occ: the suite's kernel_fill_u32 / long_copy / va_40bit_many one by one
# with HCQ_DEBUG=qmd_dump and TH_VERBOSE=1 (each launch's kernel, grid, block, registers, shared
# bytes and the field, from the dump's header line), and whether each faults. On emu:gh100 (no
# fault there) k_fill_u32 gets 8 - its true occupancy - on a grid of 65535 CTAs.
# (2) PB_QMD_FREE_CTA_SLOTS=small1 (1 where the grid has at most one CTA per SM, else 0) and =wave
# (the occ value where the grid fits one wave of it, else 0): latency rows against 0, then the
# whole HCQ suite and the LLM GPU tests on rm:0 under each - the hypothesis: only grids of more
# than one wave fault (s157's fill, copy and conv2d grids). If all pass and graph_300 is <= 0.4
# us/kernel, the mode is the candidate default (then the whole make test-gpu under it, tg128, and
# both GPUs).
set -u
OUT=${1:?usage: s158.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
for t in kernel_fill_u32 long_copy va_40bit_many kernel_empty kernel_axpb_u64; do
    PB_QMD_FREE_CTA_SLOTS=occ TH_VERBOSE=1 HCQ_LOG=info HCQ_DEBUG=qmd_dump timeout 60 build/tests/hcq_suite \
        --dev rm:0 --klog "$t" >/tmp/q.txt 2>&1
    echo "[$t occ] rc=$? $(grep -E "passed|FAIL" /tmp/q.txt | tail -1)"
    grep "qmd_dump: " /tmp/q.txt | sed -E 's/ QMD at.*//; s/^.*qmd_dump: //' | sort | uniq -c | sort -rn | head -8
done 2>&1 | tee "$OUT/a_occ.txt"
L="$OUT/a_lat.txt"
for r in 1 2; do
    for v in small1 wave 0; do
        lat_run "$v r$r" PB_QMD_FREE_CTA_SLOTS=$v | grep -v -E "copy_to|signal"
    done
done
echo "== lat done $(($(date +%s) - T0)) s"
for v in small1 wave; do
    PB_QMD_FREE_CTA_SLOTS=$v timeout 240 build/tests/hcq_suite --dev rm:0 --klog >"$OUT/a_suite_$v.txt" 2>&1
    echo "hcq_suite rm:0 $v rc=$? $(grep -E "FAIL|passed" "$OUT/a_suite_$v.txt" | tr '\n' ' ' | cut -c1-300)"
    for t in test_llm_e2e test_llm_matvec test_llm_attn_decode test_llm_attn_o test_llm_real; do
        PB_QMD_FREE_CTA_SLOTS=$v HCQ_TEST_DEVS=rm:0 timeout 150 build/tests/$t >/tmp/t.txt 2>&1
        echo "$t rm:0 $v rc=$? $(grep -E "FAIL|passed" /tmp/t.txt | tr '\n' ' ' | cut -c1-200)"
    done
done 2>&1 | tee "$OUT/a_tests.txt"
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"

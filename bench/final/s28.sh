#!/bin/bash
# s28.sh OUT - prepared in session 6, not run yet (device budget spent). The rm PDL wrong-output
# bug (docs/status.md known issues): (1) the smallest chain of its shape - hcq suite
# dep_wait_mixed (unflagged k_dep_step launches between flagged ones) on rm:0 and cuda:0, three
# times; (2) the failing e2e A/Bs with PDL forced on, as they are and with each membar
# hypothesis: the PDL producer's grid-end membar (PB_PDL_MEMBAR=3) and every chained QMD's
# membar back to L1_SYSMEMBAR (PB_QMD_CHAIN_MEMBAR=1); (3) the same with chaining off
# (PB_CHAIN=none: every launch after a WFI, so PDL links are never made - the control).
set -u
out=${1:?usage: s28.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
for i in 1 2 3; do for d in rm:0 cuda:0; do
    echo "$d: $(timeout 120 build/tests/hcq_suite --dev $d dep_wait_mixed dep_wait_chain 2>&1 | grep -E "mismatch|cell|passed" | tail -3 | tr '\n' ' ')"
done; done
t() { timeout 150 build/tests/test_llm_e2e pdl_vs_serial rope_fused_vs_own_launch persistent_vs_per_kernel 2>&1 | grep -E "rm:0 .*NMSE|step [0-9]+:|passed" | tr '\n' ' ' | sed 's/  */ /g'; echo; }
for v in "NVHCQ_PDL=1" "NVHCQ_PDL=1 PB_PDL_MEMBAR=3" "NVHCQ_PDL=1 PB_QMD_CHAIN_MEMBAR=1" "NVHCQ_PDL=1 PB_CHAIN=none" "NVHCQ_PDL=0"; do
    for i in 1 2; do echo "[$v] $(env $v HCQ_TEST_DEVS=rm:0 bash -c "$(declare -f t); t")"; done
done

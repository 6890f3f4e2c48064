#!/bin/bash
# s26.sh OUT - session 6, H100: were rm:0's q4_k e2e A/B failures (persistent_vs_per_kernel,
# rope_fused_vs_own_launch) already at the session's start? The three PDL-related e2e tests at
# 0cfec60 (.wtA, session 5's last commit), fc7143f (.wtB, before its two review mends) and HEAD.
set -u
out=${1:?usage: s26.sh OUT}
mkdir -p "$out"
for d in .wtA .wtB .; do (cd $d && make -j16 CUARCH=90 >"$out/build_$(basename $(pwd)).log" 2>&1) & done; wait
t() { (cd $1 && HCQ_TEST_DEVS=rm:0 timeout 150 build/tests/test_llm_e2e pdl_vs_serial rope_fused_vs_own_launch persistent_vs_per_kernel 2>&1 | grep -E "rm:0 .*NMSE|step 1|passed" | tr '\n' ' ' | sed 's/  */ /g'); echo; }
for i in 1 2; do for d in .wtA .wtB .; do echo "$d: $(t $d)"; done; done

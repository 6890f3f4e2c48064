#!/bin/bash
# s61.sh OUT - session 10 on the H200 (nvidia-h200, carry .anchor and .commit; ~9.5 min):
# `bench latency` default (cached GPGet, read back after the doorbell) vs PB_END_QMD_RELEASE=1
# (the segment's value released by its last QMD, no host WFI release) vs PB_GPGET_READ=1 (the
# old read before the kick), alternating, nothing else running; then, while llama.cpp builds:
# the hcq suite on rm:0 (default and with PB_END_QMD_RELEASE=1), test_llm_matvec and test_llm_e2e
# on rm:0 and cuda:0; then the same-file comparison (tg128, pp512; rm:0). Logs a_*.
set -u
out=${1:?usage: s61.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
for r in 1 2; do for v in X=0 PB_END_QMD_RELEASE=1 PB_GPGET_READ=1; do
    echo "-- latency r$r [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0,cuda:0 2>&1 | grep -E "launch_sync|back_to_back|graph_300|dep_chain|signal_round" | cut -c1-130
done; done | tee "$out/a_latency.txt"
echo "== latency done $(($(date +%s) - t0)) s"
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
{
for v in X=0 PB_END_QMD_RELEASE=1; do
    env $v timeout 200 build/tests/hcq_suite --dev rm:0 --klog >"$out/suite.txt" 2>&1
    echo "suite rm:0 [$v]: $(grep -E "FAIL|passed" "$out/suite.txt" | tr '\n' ' ')"
done
for t in test_llm_matvec test_llm_e2e; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 200 build/tests/$t >"$out/t.txt" 2>&1
    echo "$t: $(grep -E "FAIL|passed" "$out/t.txt" | tr '\n' ' ')"
done
PB_END_QMD_RELEASE=1 HCQ_TEST_DEVS='rm:0' timeout 200 build/tests/test_llm_e2e >"$out/t.txt" 2>&1
echo "test_llm_e2e [PB_END_QMD_RELEASE=1]: $(grep -E "FAIL|passed" "$out/t.txt" | tr '\n' ' ')"
} 2>&1 | tee "$out/a_tests.txt"
echo "== tests done $(($(date +%s) - t0)) s"
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
left=$((585 - ($(date +%s) - t0)))
NVHCQ_COMMIT=$(cat .commit 2>/dev/null) DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=2 \
    timeout $left bash bench/vs-llamacpp.sh $B "$out/vs" >"$out/vs.log" 2>&1
echo "vs rc=$?"
cp "$out/vs/vs-llamacpp.md" "$out/a_vs.md" 2>/dev/null
grep -E "^\|" "$out/vs/vs-llamacpp.md" 2>/dev/null | head -40 || tail -20 "$out/vs.log"
dmesg 2>/dev/null | grep -iE "xid" | tail -3
echo "== end $(($(date +%s) - t0)) s"

#!/bin/bash
# s122.sh OUT - session 16: s121 (make test-gpu at 94b1dd6) had test_llm_attn_decode fail on rm:0 with
# Xid 13 (its kernel's cubin byte-identical to session 15's, which passed): repeat that test on
# cuda:0 + rm:0 (the order of test-gpu) with the session's two runtime changes on and off - default,
# PB_D2H=ce (device -> host copies back on the copy engine), HCQ_WAIT_SPIN_US=400 (~the old spin) -
# and the kernel log after each.
set -u
OUT=${1:?usage: s122.sh OUT}
mkdir -p "$OUT"
T0=$(date +%s)
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
dmesg | grep -c Xid | sed 's/^/xid lines before: /'
run() {
    local tag=$1 i
    shift
    for i in 1 2 3; do
        env "$@" HCQ_TEST_DEVS='cuda:0 rm:0' timeout 120 build/tests/test_llm_attn_decode >"$OUT/t_${tag}_$i.txt" 2>&1
        echo "$tag $i rc=$? $(grep -E 'rm:0 k_llm|Xid|FAIL' "$OUT/t_${tag}_$i.txt" | head -3 | cut -c1-160 | tr '\n' ' ') xid=$(dmesg | grep -c Xid)"
    done
}
run default X=1
run ce PB_D2H=ce
run spin400 HCQ_WAIT_SPIN_US=400
run default2 X=1
dmesg | grep Xid | tail -5
echo "== end $(($(date +%s) - T0)) s"

#!/bin/bash
# s11.sh OUT - session 5, one device call: with PDL on, does a uniform SM shared-memory carve-out
# (HCQ_SM_CARVEOUT_KIB, every kernel's QMD TARGET at least N KiB) let dependent grids share SMs
# with their predecessor? And an L2 prefetch of the launch's own rows before the wait (NVHCQ_MVQ=pfs). tg128 per type, rm:0, same process order; cuda:0 with PDL beside.
set -u
out=${1:?usage: s11.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 100 $B/tests/test_llm_matvec 2>&1 | grep -E "FAIL|passed" | tail -2
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in ${TYPES:-q6_k q4_k q8_0}; do
    f=/tmp/m_$ty.gguf
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o $f >/dev/null 2>&1 || echo "gen $ty failed"
    for v in "NVHCQ_PDL=1" "HCQ_SM_CARVEOUT_KIB=100" "HCQ_SM_CARVEOUT_KIB=228" "NVHCQ_MVQ=pfs" "NVHCQ_PDL=1" "HCQ_SM_CARVEOUT_KIB=100" "NVHCQ_MVQ=pfs"; do
        echo "-- $ty $v"
        env $v timeout 40 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error|warn" | tail -1
    done
    timeout 40 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev cuda:0 2>&1 | grep -E "tg|error" | tail -1
done
echo "all done after $(($(date +%s) - t0)) s"

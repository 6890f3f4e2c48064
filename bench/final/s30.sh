#!/bin/bash
# s30.sh OUT - session 7, H100. The rm PDL wrong-output bug: s28 (session 7's first call)
# showed a membar at the PDL producer's completion (PB_PDL_MEMBAR=3) or on every chained QMD
# (PB_QMD_CHAIN_MEMBAR=1) fixes it. (1) what the CUDA driver writes in its QMDs for PDL pairs
# (tests/hw/cuda_qmd_scan.c; full dumps in OUT/qmd_scan*.txt); (2) the e2e A/Bs with the
# cheaper candidates (task chasing, SYSMEMBAR); (3) tg128 rm:0 for each candidate fix against PDL
# off and the unsafe PDL, plus the evict-first weights (s29's table that next6.sh cut off).
set -u
out=${1:?usage: s30.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/kernels -Isrc/gpu -Isrc/util tests/hw/cuda_qmd_scan.c \
    build/libnvhcq.a -ldl -lm -lpthread -o build/cuda_qmd_scan || exit 1
echo "== qmd scan (host memory)"
timeout 120 build/cuda_qmd_scan cuda:0 >"$out/qmd_scan.txt" 2>&1
grep -E "^== QMD|MEMBAR|LATCH|PRE_EXIT|SYNC_DOMAIN|TASK|DEPENDENT|unnamed|QMDs found|failed" "$out/qmd_scan.txt" | head -80
if ! grep -q "[1-9][0-9]* QMDs found" "$out/qmd_scan.txt"; then
    echo "== qmd scan (with device mappings)"
    HCQ_QMD_SCAN_DEV=1 timeout 200 build/cuda_qmd_scan cuda:0 >"$out/qmd_scan_dev.txt" 2>&1
    grep -E "^== QMD|MEMBAR|LATCH|PRE_EXIT|SYNC_DOMAIN|TASK|DEPENDENT|unnamed|QMDs found|failed" "$out/qmd_scan_dev.txt" | head -80
fi
t() { timeout 150 build/tests/test_llm_e2e pdl_vs_serial rope_fused_vs_own_launch persistent_vs_per_kernel 2>&1 | grep -E "step [0-9]+:|passed" | tr '\n' ' ' | sed 's/  */ /g'; echo; }
for v in "NVHCQ_PDL=1 PB_PDL_TASK_CHASING=1" "NVHCQ_PDL=1 PB_PDL_MEMBAR=3 PB_PDL_TASK_CHASING=1" "NVHCQ_PDL=1 PB_PDL_MEMBAR=1"; do
    for i in 1 2; do echo "[$v] $(env $v HCQ_TEST_DEVS=rm:0 bash -c "$(declare -f t); t")"; done
done
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for ty in q6_k q4_k q8_0; do
    for v in "NVHCQ_PDL=0" "NVHCQ_PDL=1" "NVHCQ_PDL=1 PB_PDL_MEMBAR=3" "NVHCQ_PDL=1 PB_PDL_MEMBAR=3 PB_PDL_TASK_CHASING=1" \
        "NVHCQ_PDL=1 PB_PDL_TASK_CHASING=1" "NVHCQ_PDL=1 PB_PDL_MEMBAR=1" "NVHCQ_PDL=0 NVHCQ_MVQ=ef" "NVHCQ_PDL=1 PB_PDL_MEMBAR=3 NVHCQ_MVQ=ef"; do
        r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
        echo "$ty [$v] $r"
    done
done

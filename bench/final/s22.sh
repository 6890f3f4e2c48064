#!/bin/bash
# s22.sh OUT - session 6, H200: (1) the mat-vec bodies on the GPU and NVHCQ_MVQ=p1's e2e tests
# (whole output of any failure); (2) the random-start latch ids (chain, pdl_vs_serial);
# (3) issue 12's GEMM rows (wgmma vs cuBLAS) and issue 13's copy and latency rows, rm:0 vs
# cuda:0; (4) tg128 default vs p1, pp512 rm:0 / cuda:0.
set -u
out=${1:?usage: s22.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader
HCQ_TEST_DEVS="rm:0" timeout 120 build/tests/test_llm_matvec 2>&1 | grep -E "q8_p1|q8_tma|q8:|FAIL|passed" | grep -v "^    cpu"
NVHCQ_MVQ=p1 HCQ_TEST_DEVS="rm:0" timeout 150 build/tests/test_llm_e2e >"$out/e2e_p1.log" 2>&1
grep -E "passed" "$out/e2e_p1.log" | tail -1; grep -B8 -E "^  FAIL" "$out/e2e_p1.log" | grep -vE "^    (cpu|emu)" | head -40
timeout 60 build/tests/hcq_suite --dev rm:0 dep_wait_chain kernel_dep_step 2>&1 | tail -1
for i in 1 2; do HCQ_TEST_DEVS="rm:0" timeout 90 build/tests/test_llm_e2e pdl_vs_serial 2>&1 | tail -1; done
echo "== bench gemm copy latency"
timeout 250 build/nvhcq bench gemm copy latency --devs rm:0,cuda:0 --json "$out/bench.json" >"$out/bench.txt" 2>&1
echo "bench rc=$?"; grep -vE "^\s*$" "$out/bench.txt" | head -120
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q4_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
echo "== tg128 rm:0"
for round in 1 2; do
    for ty in q6_k q4_k q8_0; do
        for v in "X=0" "NVHCQ_MVQ=p1"; do
            r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
            echo "r$round $ty [$v] $r"
        done
    done
done
echo "== pp512"
for d in cuda:0 rm:0; do for ty in q4_k q6_k q8_0; do
    r=$(timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 512 -n 0 -r 3 --dev $d 2>&1 | grep -E "pp512|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "$d $ty pp512 $r"
done; done

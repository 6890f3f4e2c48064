#!/bin/bash
# s19.sh OUT - session 6, H100: (1) the random-start latch ids after a deliberate latch hang:
# pdl_vs_serial x4 with them, then x2 with the earlier ids from 1 (PB_PDL_LATCH=inc16: the
# suspected failure); (2) the ring mat-vec at two CTAs per SM against the default; (3) Nsight
# Compute on cuda:0's decode mat-vec, if the machine has it.
set -u
out=${1:?usage: s19.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
e2e() { HCQ_TEST_DEVS="rm:0" timeout 90 build/tests/test_llm_e2e pdl_vs_serial 2>&1 | grep -E "FAIL|passed|step|NMSE" | grep -vE "cpu|emu" | tail -3; }
echo "== new ids: chain"; timeout 60 build/tests/hcq_suite --dev rm:0 dep_wait_chain 2>&1 | tail -1
echo "== hang (PB_PDL_LATCH=alt)"; PB_PDL_LATCH=alt timeout 60 build/tests/hcq_suite --dev rm:0 dep_wait_chain 2>&1 | grep -cE "lost"
for i in 1 2 3 4; do echo "-- random-start ids, run $i"; e2e; done
for i in 1 2; do echo "-- ids from 1 (inc16), run $i"; PB_PDL_LATCH=inc16 e2e; done
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
echo "== tg128 rm:0 (-r 3)"
for ty in q6_k q8_0; do
    for v in "X=0" "NVHCQ_MVQ=tma NVHCQ_MVQ_CPS=2" "X=0" "NVHCQ_MVQ=tma NVHCQ_MVQ_CPS=2"; do
        r=$(env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
        echo "$ty [$v] $r"
    done
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "== ncu: ${NCU:-none}"; ls /usr/local/ | head; ls /usr/local/cuda/bin | tr '\n' ' ' | head -c 600; echo
if [ -n "$NCU" ]; then
    timeout 240 $NCU --target-processes all -k regex:k_llm_matvec_q8 -s 400 -c 5 \
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis \
        build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 16 -r 1 --dev cuda:0 >"$out/ncu.txt" 2>&1
    grep -E "k_llm_matvec|Grid Size|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Registers|Stall|Warp Cycles|Issued|Eligible|L2 Hit|L1/TEX Hit|Mem Busy|Max Bandwidth" "$out/ncu.txt" | head -120
fi

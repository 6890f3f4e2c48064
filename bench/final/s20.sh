#!/bin/bash
# s20.sh OUT - session 6, H100: Nsight Compute stall reasons of one decode step's kernels on
# cuda:0 (same cubins as rm:0): is the mat-vec waiting on memory, shared memory or instruction
# fetch (its code is 52 KB, the decode attention's 147 KB)?
set -u
out=${1:?usage: s20.sh OUT}
mkdir -p "$out"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
build/nvhcq gen-model --preset llama-3.2-1b --type q6_k --vocab $V -o /tmp/m_q6_k.gguf >/dev/null 2>&1
M="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,smsp__warps_active.avg.per_cycle_active,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__inst_executed.sum"
for v in "X=0" "NVHCQ_MVQ=tma NVHCQ_MVQ_CPS=2"; do
  echo "== $v"
  env $v timeout 200 /usr/local/cuda/bin/ncu --target-processes all -k "regex:k_llm_(matvec_q8|attn_decode)" -s 500 -c 6 --metrics "$M" \
    build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 16 -r 1 --dev cuda:0 >"$out/ncu.txt" 2>&1
  awk '/k_llm_/{print "--", $1, $2} /stalled|warps_active|duration|throughput|inst_executed/{ if ($NF+0 >= 0.3 || $1 ~ /duration|throughput|warps_active|inst_exec/) print "   ", $1, $NF}' "$out/ncu.txt" | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | head -150
done

#!/bin/bash
# s35.sh OUT - session 7's last H100 call (~4.5 min): the GPU suites after the session's changes
# (PDL membar, PDL on for rm, evict-first weights, NVLink peer default), then the one-pass
# prologue with evict-first weights (NVHCQ_MVQ=p1ef) now that the PDL bug no longer spoils its
# A/Bs: e2e on rm:0 with it, tg128 A/B default / p1ef / p1, two rounds, Q6_K and Q8_0.
set -u
out=${1:?usage: s35.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
timeout 170 build/tests/hcq_suite --dev rm:0 --klog >"$out/suite_rm.log" 2>&1
echo "hcq_suite rm:0 rc=$?: $(tail -1 "$out/suite_rm.log") [$(($(date +%s) - t0)) s]"
grep -E "^  FAIL" "$out/suite_rm.log" | head -5
for t in test_llm_matvec test_llm_attn_decode test_llm_e2e test_llm_real; do
    echo "$t: $(HCQ_TEST_DEVS=rm:0 timeout 100 build/tests/$t 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
done
echo "e2e p1ef: $(NVHCQ_MVQ=p1ef HCQ_TEST_DEVS=rm:0 timeout 100 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ') [$(($(date +%s) - t0)) s]"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for round in 1 2; do for ty in q6_k q8_0; do for v in "X=default" "NVHCQ_MVQ=p1ef" "NVHCQ_MVQ=p1"; do
    [ $(($(date +%s) - t0)) -gt 330 ] && { echo "time cap"; exit 0; }
    r=$(env $v timeout 40 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg128|rror" | tail -1 | awk -F'|' '{print $(NF-1)}')
    echo "r$round $ty [$v] $r"
done; done; done
echo "== end $(($(date +%s) - t0)) s"

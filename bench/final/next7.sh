#!/bin/bash
# next7.sh OUT - the first H100 call of the session after session 7 (~6 min). Before it, here:
#   git worktree add .wtP p1-default && echo /.wtP/ >> .git/info/exclude
# and call `run` with carry [".wtP"]. It runs (1) the four HCQ tests added in session 7 that have
# not met a GPU (kernel_grid_mark: 2^31 - 1 CTAs; concurrent_tensor_ops; timestamp_launch: stamps
# in the QMDs' own releases on rm; va_40bit_many) on rm:0 and cuda:0 with the kernel log, then the in-situ
# decode profile against the serial one, the latency rows without the texture header/sampler
# invalidations (PB_QMD_INVALIDATE=0xC, issue 13's graph cost) and e2e with it; (2) the stress tests on rm:0, 20 s each where timed (memory_churn's pool-trim
# change of 4af37e8 has not run on a GPU); (3) branch p1-default's check, bench/final/s36.sh
# (merge the branch when its e2e is 16/0 on both devices and tg128 is not slower).
set -u
out=${1:?usage: next7.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
for d in rm:0 cuda:0; do
    echo "$d: $(timeout 120 build/tests/hcq_suite --dev $d --klog kernel_grid_mark concurrent_tensor_ops timestamp_launch va_40bit_many 2>&1 | grep -E "FAIL|grid|passed" | tr '\n' ' ')"
done
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
build/nvhcq gen-model --preset llama-3.2-1b --type q6_k --vocab $V -o /tmp/m_q6_k.gguf >/dev/null 2>&1
for v in X=0 NVHCQ_PROF_SERIAL=1; do
    echo "-- profile [$v]"
    env $v timeout 60 build/nvhcq llm-bench -m /tmp/m_q6_k.gguf -p 0 -n 16 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\| [a-z]|profile:" | head -12
done
for v in X=0 PB_QMD_INVALIDATE=0xC; do
    echo "-- latency [$v]"
    env $v timeout 60 build/nvhcq bench latency --devs rm:0 2>&1 | grep -E "back_to_back|graph_300|dep_chain" | cut -c1-110
done
echo "e2e PB_QMD_INVALIDATE=0xC: $(PB_QMD_INVALIDATE=0xC HCQ_TEST_DEVS=rm:0 timeout 100 build/tests/test_llm_e2e 2>&1 | grep -E "FAIL|passed" | tr '\n' ' ')"
echo "== stress rm:0 [$(($(date +%s) - t0)) s]"
HCQ_STRESS_S=20 timeout 200 build/tests/hcq_suite --dev rm:0 --slow --klog stress_ 2>&1 | grep -E "^  (ok|FAIL)|held|launches in|rounds|after|passed" | head -20
echo "== p1-default [$(($(date +%s) - t0)) s]"
[ -d .wtP ] && (cd .wtP && bash bench/final/s36.sh "$out/s36" 2>&1 | tail -25) || echo "no .wtP (see the header)"
echo "== end $(($(date +%s) - t0)) s"

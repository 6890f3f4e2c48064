#!/bin/bash
# s91.sh OUT - the runtime rows and the whole test run that fits one call (either GPU; ~9 min):
# `bench gemm latency --devs rm:0,cuda:0` with nothing else running, then `make test-gpu` with
# the hcq suite on every device but cuda:0 (HCQ_TEST_DEVS; that suite alone took 153 s in s84,
# whose whole run was cut at 540 s inside the rm:0 suite after it; it passed there, 89/0/8, and
# the CUDA backend has not changed since). The LLM unit suites then run on rm:0 only (s90 ran
# them on rm:0 and cuda:0).
set -u
out=${1:?usage: s91.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
[ -f .commit ] && export NVHCQ_COMMIT=$(cut -c1-10 .commit) # lib.sh says why
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
timeout 150 build/nvhcq bench gemm latency --devs rm:0,cuda:0 --json "$out/a_bench.json" >"$out/a_bench.txt" 2>&1
echo "bench rc=$? ($(($(date +%s) - t0)) s)"
grep -E "gemm_(f16|bf16) |launch_sync|graph_300|dep_chain" "$out/a_bench.txt" | cut -c1-120
HCQ_TEST_DEVS="cpu emu:gh100 emu:ga102 emu:ga10b rm:0" SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" \
    timeout $((570 - ($(date +%s) - t0))) make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$?"
grep -E "FAIL|^total" "$out/a_test_gpu.txt" | tail -8
echo "== end $(($(date +%s) - t0)) s"

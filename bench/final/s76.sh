#!/bin/bash
# s76.sh OUT - the evidence issues 12 and 13 still lack on the **H200** (ask nvidia-h200; on an
# H100 it repeats session 11's rows): `bench gemm latency --devs rm:0,cuda:0` (the TMA
# GEMMs with the 128 x 128 tiles at small sizes; launch + sync, graph, dependent chains), then the
# whole `make test-gpu` with nothing else running (timeout 480 s). ~9 min. Logs a_*.
set -u
out=${1:?usage: s76.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
timeout 240 build/nvhcq bench gemm latency --devs rm:0,cuda:0 --json "$out/a_bench.json" >"$out/a_bench.txt" 2>&1
grep -E "gemm_(f16|bf16) |launch_sync|graph_300|dep_chain" "$out/a_bench.txt" | cut -c1-120
echo "bench done ($(($(date +%s) - t0)) s)"
SKIP_SUITES="llama3_vocab qwen2_vocab command_r_vocab" timeout 480 make test-gpu CUARCH=90 >"$out/a_test_gpu.txt" 2>&1
echo "make test-gpu rc=$?"
grep -E "FAIL|^total" "$out/a_test_gpu.txt" | tail -8
echo "== end $(($(date +%s) - t0)) s"

#!/bin/bash
# s86.sh OUT - the H200 evidence issues 11-13 lack (ask nvidia-h200; on an H100 it repeats the
# H100 rows; carry .anchor .commit; ~9 min): `bench gemm latency --devs rm:0,cuda:0` with nothing
# else running, then while llama.cpp builds the gen-model tg128 rows (rm:0, cuda:0; CPU busy:
# indicative), then the same-file comparison on five types (tg128, pp512; REPS 3) and pp2048 on
# three. Then, in a call of its own, `bench/final/s84.sh` (the whole make test-gpu). Logs a_*.
set -u
out=${1:?usage: s86.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/a_gpu.txt"
timeout 200 build/nvhcq bench gemm latency --devs rm:0,cuda:0 --json "$out/a_bench.json" >"$out/a_bench.txt" 2>&1
echo "bench rc=$? ($(($(date +%s) - t0)) s)"
grep -E "gemm_(f16|bf16) |launch_sync|graph_300|dep_chain" "$out/a_bench.txt" | cut -c1-120
ll=/tmp/ll
(bash .anchor/llamacpp/build.sh $ll 90 >"$out/llbuild.log" 2>&1; echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llbuild.log") &
bp=$!
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in q6_k q8_0 q4_k; do
    build/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o /tmp/m_$ty.gguf >/dev/null 2>&1 || echo "gen $ty failed"
done
for ty in q6_k q8_0 q4_k; do for d in rm:0 cuda:0; do
    x=$(timeout 60 build/nvhcq llm-bench -m /tmp/m_$ty.gguf -p 0 -n 128 -r 3 --dev $d 2>&1 | grep -E "tg|rror" | awk -F'|' '{printf "%s ", $(NF-1)}')
    echo "$ty [$d] tg128 (llama.cpp compiling): $x"
done; done 2>&1 | tee "$out/a_tg.txt"
wait $bp
tail -1 "$out/llbuild.log"
B=$ll/b/bin
[ -x $B/llama-bench ] || { echo "no llama-bench"; exit 1; }
NVHCQ=build/nvhcq NVHCQ_COMMIT="$(cat .commit)" DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M" REPS=3 \
    timeout 240 bash bench/vs-llamacpp.sh $B /tmp/vs >"$out/vs.log" 2>&1
cp /tmp/vs/vs-llamacpp.md "$out/a_vs.md"; cp /tmp/vs/vs-llamacpp.json "$out/a_vs.json"
grep -E "tg128|pp512" /tmp/vs/vs-llamacpp.md
mkdir -p /tmp/vs2 && ln -sfn /tmp/vs/models /tmp/vs2/models
NVHCQ=build/nvhcq NVHCQ_COMMIT="$(cat .commit)" DEVS="rm:0" TYPES="Q4_K_M Q6_K Q8_0" REPS=2 PP=2048 TG=0 \
    timeout 120 bash bench/vs-llamacpp.sh $B /tmp/vs2 >"$out/vs2.log" 2>&1
cp /tmp/vs2/vs-llamacpp.md "$out/a_vs2048.md"; cp /tmp/vs2/vs-llamacpp.json "$out/a_vs2048.json"
grep -E "pp2048" /tmp/vs2/vs-llamacpp.md
echo "== end $(($(date +%s) - t0)) s"

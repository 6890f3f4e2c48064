#!/bin/bash
# s108.sh OUT - session 15 (ask nvidia-h200-x2; carry .anchor .llqb .commit; <= 9.5 min). Two GPUs:
# the HCQ suite's device-pair tests (rm peer mappings both ways, cuda:0+cuda:1; last run in
# session 7) and the cross-device bench on the final tree. If the GPUs are H200s, the H200
# evidence issues 11-13 lack, on GPU 0 (s86's content): `bench gemm latency --devs rm:0,cuda:0`
# with nothing else running, then the pair tests while llama.cpp builds, then the same-file
# comparison on five types (tg128, pp512) and pp2048 on three. On H100s it stops after the pair
# tests and the cross-device bench. Pieces: lib.sh.
set -u
OUT=${1:?usage: s108.sh OUT}
mkdir -p "$OUT"
. bench/final/lib.sh
make -j24 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader | tee "$OUT/a_gpu.txt"
nvidia-smi topo -m 2>&1 | head -4
h200=0
grep -q H200 "$OUT/a_gpu.txt" && h200=1
mark=$(build/nvhcq dmesg-check --mark 2>/dev/null | tail -1)
P="multidevice multidevice_p2p multidevice_signal_wait jit_several_devs small_copies_from_host_buf_transfer"
pair() { # NAME DEV1 DEV2 [VAR=VALUE...]
    local name=$1 d1=$2 d2=$3
    shift 3
    env "$@" timeout 120 build/tests/hcq_suite --dev "$d1" --dev2 "$d2" --klog $P >"$OUT/pair_$name.log" 2>&1
    echo "pair $name rc=$?: $(tail -1 "$OUT/pair_$name.log") | $(grep -hE "peer mapping" "$OUT/pair_$name.log" | head -1)"
    grep -E "^  FAIL" "$OUT/pair_$name.log" | head -4
}
pairs() {
    pair rm_peer rm:0 rm:1 HCQ_RM_PEER=1 HCQ_TEST_EXPECT_PEER=1
    pair rm_peer_rev rm:1 rm:0 HCQ_RM_PEER=1 HCQ_TEST_EXPECT_PEER=1
    pair rm_default rm:0 rm:1
    pair cuda cuda:0 cuda:1
}
if [ $h200 = 1 ]; then
    timeout 170 build/nvhcq bench gemm latency --devs rm:0,cuda:0 --json "$OUT/a_bench.json" >"$OUT/a_bench.txt" 2>&1
    echo "bench rc=$? ($(($(date +%s) - T0)) s)"
    grep -E "gemm_(f16|bf16) |launch_sync|graph_300|dep_chain" "$OUT/a_bench.txt" | cut -c1-110
    ll_build_bg
    pairs
    mkdir -p /tmp/vs/models # the same files vs-llamacpp.sh would write, by the carried quantizer
    build/nvhcq gen-model --preset llama-3.2-1b --type f16 --vocab "$V_GPT2" -o /tmp/vs/models/llama-3.2-1b-f16.gguf >/dev/null 2>&1
    for ty in Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M; do
        .llqb/llama-quantize /tmp/vs/models/llama-3.2-1b-f16.gguf /tmp/vs/models/llama-3.2-1b-$ty.gguf $ty >/dev/null 2>&1 || echo "quantize $ty failed"
    done
    echo "models ready ($(($(date +%s) - T0)) s)"
    ll_wait || exit 1
    c=$(cat .commit)
    TYPES="Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M" REPS=3 VS_TIMEOUT=$((520 - ($(date +%s) - T0))) vs_run build/nvhcq /tmp/vs "$c"
    grep -E "tg128|pp512" "$OUT/a_vs.md"
    echo "vs done ($(($(date +%s) - T0)) s)"
    left=$((560 - ($(date +%s) - T0)))
    if [ $left -gt 40 ]; then
        mkdir -p /tmp/vs2048 && ln -sfn /tmp/vs/models /tmp/vs2048/models
        TYPES="Q4_K_M Q6_K Q8_0" REPS=2 PP=2048 TG=0 VS_TIMEOUT=$left vs_run build/nvhcq /tmp/vs2048 "$c"
        grep -E "pp2048" "$OUT/a_vs2048.md"
    fi
else
    pairs
    HCQ_RM_PEER=1 timeout 120 build/nvhcq bench xdev --devs rm:0,rm:1,cuda:0,cuda:1 --json "$OUT/a_xdev.json" >"$OUT/a_xdev.txt" 2>&1
    echo "xdev rc=$?"; grep -E "GiB|MiB" "$OUT/a_xdev.txt" | head -12
fi
build/nvhcq dmesg-check --since "$mark" 2>&1 | tail -3
echo "== end $(($(date +%s) - T0)) s"

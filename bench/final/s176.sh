#!/bin/bash
# s176.sh OUT - session 24 (ask for an H200; carry .commit; ~3 min): on an H200, s164.sh (the H200
# half of issue 13). On any other card: the part of `make test-gpu` that s175's H100 run did not
# reach in its 516 s (that machine ran the suites ~15% slower than session 23's: the cuda:0 suite
# 132 s, test_llm_matvec 95 s) - the shell suites, the ga10b doorbell-batch suite, the kernel-log
# check since the mark, then the deliberate-fault tests (device_lost on rm:0 / cuda:0,
# test_cuda fault_device_lost) - in run_all.sh's order, with its summary lines and a total.
set -u
OUT=${1:?usage: s176.sh OUT}
mkdir -p "$OUT"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    echo "H200: s164"; bash bench/final/s164.sh "$OUT"; exit
fi
export T0=$(date +%s)
. bench/final/lib.sh
{
echo "not an H200: the tail of make test-gpu"
call_build || exit 1
B=build
log=$OUT/a_tail_sums.txt; : > "$log"
run() { echo "\$ $*"; t0=$(date +%s); "$@" 2>&1 | tee -a "$log"; echo "(took $(($(date +%s) - t0)) s: $*)"; }
mark=$($B/nvhcq dmesg-check --mark 2>/dev/null | tail -n 1)
HCQ_NVGPU_DOORBELL_BATCH=8 run $B/tests/hcq_suite --dev emu:ga10b
for s in tests/suites/*.sh; do
    case " llama3_vocab qwen2_vocab command_r_vocab " in *" $(basename "$s" .sh) "*) echo "skipping $s (no node here)"; continue ;; esac
    BUILD=$B run sh "$s"
done
echo "\$ nvhcq dmesg-check --since $mark"
$B/nvhcq dmesg-check --since "$mark" > "$OUT/dmesg.txt" 2>&1 && echo "dmesg: 1 passed, 0 failed" | tee -a "$log" || echo "dmesg: 0 passed, 1 failed" | tee -a "$log"
tail -n 5 "$OUT/dmesg.txt"
for d in rm:0 cuda:0; do HCQ_TEST_FAULTS=1 run $B/tests/hcq_suite --dev $d device_lost; done
HCQ_TEST_FAULTS=1 run $B/tests/test_cuda fault_device_lost
grep -E '^[^ ]+: [0-9]+ passed, [0-9]+ failed' "$log"
p=$(grep -Eo '^[^ ]+: [0-9]+ passed' "$log" | awk '{s+=$2} END {print s+0}')
f=$(grep -Eo '^[^ ]+: [0-9]+ passed, [0-9]+ failed' "$log" | awk '{s+=$4} END {print s+0}')
echo "tail total: $p passed, $f failed"
call_end
} 2>&1 | tee "$OUT/a_s176.txt"

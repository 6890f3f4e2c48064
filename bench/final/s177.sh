#!/bin/bash
# s177.sh OUT - session 24 (ask for an H200; carry .commit; ~3.5 min): on an H200, s164.sh. On any
# other card: where `make test-gpu` spends its time on the GPUs (s175 outgrew one call): the HCQ
# suite on cuda:0 with every test's seconds (TH_TIMES=1), one tiny test per device as a whole
# process three times (device open cost), and test_llm_matvec on cuda:0 + rm:0 now that it opens
# each device once instead of once per kernel (it took 78-95 s in make test-gpu before).
set -u
OUT=${1:?usage: s177.sh OUT}
mkdir -p "$OUT"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    echo "H200: s164"; bash bench/final/s164.sh "$OUT"; exit
fi
export T0=$(date +%s)
. bench/final/lib.sh
{
echo "not an H200: test-time diagnosis"
call_build || exit 1
for d in cuda:0 rm:0; do for i in 1 2 3; do
    s=$(date +%s%N); build/tests/hcq_suite --dev $d signal >/dev/null 2>&1; echo "[$d] hcq_suite signal as a process: $(( ($(date +%s%N) - s) / 1000000 )) ms"
done; done
s=$(date +%s); HCQ_TEST_DEVS="cuda:0 rm:0" build/tests/test_llm_matvec matvec_all_types_modes_devices > "$OUT/matvec.txt" 2>&1
echo "test_llm_matvec matvec_all_types_modes_devices on cuda:0 rm:0 (cpu too): $(($(date +%s) - s)) s"; grep -E "passed|FAIL" "$OUT/matvec.txt"
s=$(date +%s); TH_TIMES=1 build/tests/hcq_suite --dev cuda:0 > "$OUT/suite_cuda0_times.txt" 2>&1
echo "hcq_suite cuda:0 (no klog): $(($(date +%s) - s)) s"; tail -1 "$OUT/suite_cuda0_times.txt"
grep -Eo "ok   [a-z0-9_]+ \((slow, )?[0-9.]+ s\)" "$OUT/suite_cuda0_times.txt" | sed -E 's/ok   ([a-z0-9_]+) \((slow, )?([0-9.]+) s\)/\3 \1/' | sort -rn | head -25
grep -Eo "\((slow, )?[0-9.]+ s\)" "$OUT/suite_cuda0_times.txt" | grep -Eo "[0-9.]+" | awk '{s+=$1; n++} END {print "sum of test seconds", s, "over", n, "tests"}'
call_end
} 2>&1 | tee "$OUT/a_s177.txt"

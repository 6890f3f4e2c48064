#!/bin/bash
# clock.sh MODEL OUT - reads (never sets) the SM clock every 100 ms while nvhcq prefill runs on
# rm:0 and cuda:0 after idle gaps: tests the hypothesis that rm:0's slow/noisy pp512 rows come
# from a GPU left at idle clocks (the CUDA driver raises the performance state for a context).
set -u
m=${1:?usage: clock.sh MODEL OUT}
out=${2:?usage: clock.sh MODEL OUT}
mkdir -p "$out"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,pstate,power.draw --format=csv,noheader -lms 100 >"$out/clocks.csv" 2>&1 &
sp=$!
for d in rm:0 cuda:0 rm:0; do
    sleep 3
    echo "-- $(date +%T.%N | cut -c1-12) $d pp512"
    timeout 60 build/nvhcq llm-bench -m $m -p 512 -n 0 -r 5 --dev $d 2>&1 | grep -E "pp|error"
    echo "-- $(date +%T.%N | cut -c1-12) done"
done
kill $sp
awk -F', ' '{print $1" "$2" "$4}' "$out/clocks.csv" | awk '{c[$3" "$4]++} END {for (k in c) print k, c[k]}' | sort
echo "(clock MHz and pstate: samples)"

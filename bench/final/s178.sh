#!/bin/bash
# s178.sh OUT - session 24 (ask for an H200; carry .commit; ~2 min): on an H200, s164.sh. On any
# other card: is the ~0.8 s every cuda:0 test costs (s177) and the ~0.5 s of an rm:0 test the
# driver initializing the GPU again at each first open (no persistence mode: the adapter is torn
# down when its last file descriptor closes)? The same tiny tests as whole processes and in one
# process (TH_TIMES=1), first as they are, then while a background process merely holds
# /dev/nvidia0 open (persistence mode itself is left as it is).
set -u
OUT=${1:?usage: s178.sh OUT}
mkdir -p "$OUT"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
    echo "H200: s164"; bash bench/final/s164.sh "$OUT"; exit
fi
export T0=$(date +%s)
. bench/final/lib.sh
{
echo "not an H200: device open cost"
nvidia-smi --query-gpu=persistence_mode --format=csv,noheader | sed 's/^/persistence mode: /'
call_build || exit 1
T="signal wait bind kernel_fill_f32 kernel_copy_bytes import_host"
probe() {
    for d in cuda:0 rm:0; do
        for i in 1 2 3; do
            s=$(date +%s%N); build/tests/hcq_suite --dev $d signal >/dev/null 2>&1
            echo "[$1 $d] hcq_suite signal as a process: $(( ($(date +%s%N) - s) / 1000000 )) ms"
        done
        TH_TIMES=1 build/tests/hcq_suite --dev $d $T 2>&1 | grep -E "ok |FAIL|passed" | sed "s/^/[$1 $d] /"
    done
}
probe plain
( exec 3</dev/nvidia0; sleep 120 ) &
H=$!
sleep 2
ls -l /proc/$H/fd 2>/dev/null | grep -c nvidia | sed 's/^/holder fds on nvidia nodes: /'
probe held
kill $H 2>/dev/null; pkill -P $H 2>/dev/null
call_end
} 2>&1 | tee "$OUT/a_s178.txt"

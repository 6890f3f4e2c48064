#!/bin/bash
# gpu2.sh OUT - the measurements of a session, after gpu1.sh on the same machine (bench/final/README.md).
set -u
out=${1:?usage: gpu2.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
[ -x $B/nvhcq ] || make -j16 CUARCH=90 >"$out/build2.log" 2>&1
ll=.llbuild/b/bin
part() { # part NAME LIMIT_S CMD...
    local name=$1 lim=$2
    shift 2
    echo "== $name ($(($(date +%s) - t0)) s)"
    timeout "$lim" "$@" >"$out/$name.log" 2>&1
    local rc=$?
    tail -n 25 "$out/$name.log"
    [ $rc -eq 0 ] || echo "FAIL: $name rc=$rc"
}
for p in ${PARTS:-decode2 gemm2}; do
    [ -f bench/final/$p.sh ] && part "$p" 170 bash bench/final/$p.sh $B "$out/$p"
done
part bench 120 $B/nvhcq bench latency copy alloc --devs cuda:0,rm:0 --json "$out/bench.json"
if [ -x $ll/llama-bench ]; then
    part vs-llamacpp 240 env REPS=${REPS:-2} bash bench/vs-llamacpp.sh $ll "$out/vs"
    [ -f bench/final/ppl.sh ] && part ppl 90 bash bench/final/ppl.sh $B "$out/ppl" $ll
    m=tests/data/models/tinystories-656k.gguf
    part real-llamacpp 30 $ll/llama-simple -m $m -n 32 "Once upon a time"
    part real-nvhcq 30 $B/nvhcq run -m $m -p "Once upon a time" -n 32 --temp 0 --dev rm:0
else
    echo "FAIL: no llama.cpp build in $ll (gpu1.sh not run on this machine?)"
fi
echo "gpu2 done after $(($(date +%s) - t0)) s"

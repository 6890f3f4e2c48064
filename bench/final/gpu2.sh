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
if [ -x $ll/llama-bench ]; then
    part vs-llamacpp 240 env REPS=${REPS:-2} bash bench/vs-llamacpp.sh $ll "$out/vs"
    m=tests/data/models/tinystories-656k.gguf
    part real-llamacpp 30 $ll/llama-simple -m $m -n 32 "Once upon a time"
    part real-nvhcq 30 $B/nvhcq run -m $m -p "Once upon a time" -n 32 --temp 0 --dev rm:0
    [ -f bench/final/ppl.sh ] && part ppl 90 bash bench/final/ppl.sh $B "$out/ppl" $ll
else
    echo "FAIL: no llama.cpp build in $ll (gpu1.sh not run on this machine?)"
fi
q6=$(ls "$out"/vs/models/*Q6_K.gguf 2>/dev/null | head -1)
if [ -z "$q6" ]; then
    q6=$out/q6_k.gguf
    $B/nvhcq gen-model --preset llama-3.2-1b --type q6_k --vocab tests/data/tokenizers/ggml-vocab-gpt-2.gguf -o "$q6" >/dev/null 2>&1
fi
part llm-depth 110 $B/nvhcq llm-bench -m "$q6" -p 0 -n 64 -r 2 -d 0,1024,4096 --profile --dev rm:0
part bench 100 $B/nvhcq bench latency copy alloc --devs cuda:0,rm:0 --json "$out/bench.json"
part matmul 120 $B/nvhcq bench matmul --devs cuda:0,rm:0 --json "$out/matmul.json"
for p in ${PARTS:-}; do
    [ -f bench/final/$p.sh ] && part "$p" 170 bash bench/final/$p.sh $B "$out/$p"
done
echo "gpu2 done after $(($(date +%s) - t0)) s"

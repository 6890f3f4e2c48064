#!/usr/bin/env bash
# gemm2.sh - issue 12 GEMM/prefill measurement batch for the lead's final GPU run.
#
# usage: bench/final/gemm2.sh BUILD_DIR OUTDIR
# Runs, per device: the HCQ-suite GEMM rows, `nvhcq bench matmul` (cuBLAS anchor rows come with
# it on cuda), and pp512 (`llm-bench -p 512 -n 0 -r REPS`) on gen-model LLaMA-3.2-1B files
# (Q6_K, Q4_K, Q8_0), once per variant in VARIANTS (each variant is the value of the NVHCQ_GEMM
# environment variable; "default" leaves it unset). Every step has its own time limit; a failing
# step prints FAIL and its reason and the script goes on; it always exits 0. Last: a short table.
# Environment: DEVS (default "rm:0 cuda:0"), VARIANTS (default "default"), PRESET
# (llama-3.2-1b), TYPES ("q6_k q4_k q8_0"), REPS (3), STEP_S (per-step limit, 40), MATMUL_ARGS
# (extra `bench matmul` flags, e.g. --quick; default none = full sizes incl. 4096^3 with cuBLAS anchors, limited to MATMUL_S=60 s), VOCAB (tests/data/tokenizers/ggml-vocab-gpt-2.gguf).
# Note (gemm2 branch): no NVHCQ_GEMM variants exist yet, so VARIANTS=default measures the
# current kernels only; the loop is there so new configs are one word each.
set -u
B=${1:?usage: gemm2.sh BUILD_DIR OUTDIR}
O=${2:?usage: gemm2.sh BUILD_DIR OUTDIR}
DEVS=${DEVS:-rm:0 cuda:0}
VARIANTS=${VARIANTS:-default}
PRESET=${PRESET:-llama-3.2-1b}
TYPES=${TYPES:-q6_k q4_k q8_0}
REPS=${REPS:-3}
STEP_S=${STEP_S:-40}
MATMUL_ARGS=${MATMUL_ARGS:-}
MATMUL_S=${MATMUL_S:-60}
VOCAB=${VOCAB:-tests/data/tokenizers/ggml-vocab-gpt-2.gguf}
mkdir -p "$O/models" || { echo "FAIL: cannot create $O"; exit 0; }
T=$O/table.txt
: >"$T"

# step NAME CMD...: runs CMD with the per-step limit, output in $O/NAME.log; records OK/FAIL.
step() {
    local lim=$STEP_S; [ "$1" = "-t" ] && { lim=$2; shift 2; }
    local name=$1; shift
    local rc
    timeout "$lim" "$@" >"$O/$name.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        printf '%-40s OK\n' "$name" >>"$T"
    else
        local why="exit $rc"
        [ $rc -eq 124 ] && why="timed out after ${lim}s"
        printf '%-40s FAIL (%s: %s)\n' "$name" "$why" "$(tail -n 1 "$O/$name.log" | cut -c1-80)" >>"$T"
        echo "FAIL $name: $why"
    fi
    return 0
}

setvar() { if [ "$1" = default ]; then unset NVHCQ_GEMM; else export NVHCQ_GEMM=$1; fi; }

for d in $DEVS; do
    step "suite-$d" "$B/tests/hcq_suite" --dev "$d" gemm
done
for v in $VARIANTS; do
    setvar "$v"
    step -t "$MATMUL_S" "matmul-$v" "$B/nvhcq" bench matmul --devs "$(echo $DEVS | tr ' ' ,)" $MATMUL_ARGS
done
for ty in $TYPES; do
    m=$O/models/$PRESET-$ty.gguf
    [ -f "$m" ] || step "gen-$ty" "$B/nvhcq" gen-model --preset "$PRESET" --type "$ty" --vocab "$VOCAB" -o "$m"
    [ -f "$m" ] || continue
    for v in $VARIANTS; do
        setvar "$v"
        for d in $DEVS; do
            step "pp512-$ty-$v-$d" "$B/nvhcq" llm-bench -m "$m" -p 512 -n 0 -r "$REPS" --dev "$d"
        done
    done
done
unset NVHCQ_GEMM

echo "== pass/fail"
cat "$T"
echo "== matmul rows (TFLOP/s columns as printed by nvhcq bench)"
for v in $VARIANTS; do
    echo "-- variant $v"; grep -i "gemm\|matmul\|cublas" "$O/matmul-$v.log" 2>/dev/null | head -40
done
echo "== pp512 rows"
for f in "$O"/pp512-*.log; do
    [ -f "$f" ] || continue
    printf '%s: %s\n' "$(basename "$f" .log)" "$(grep -i "pp512\|pp 512\|tok/s" "$f" | tail -n 2 | tr '\n' ' ')"
done
exit 0

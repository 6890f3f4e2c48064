#!/bin/bash
# decode3.sh OUT - one device call: build, the decode mat-vec tests on the GPU backends, then
# decode speed of gen-model files per type with the int8 mat-vec (default) and the f32 one
# (NVHCQ_MV=f32: the file's layout, k_llm_matvec_wide) in the same process order.
set -u
out=${1:?usage: decode3.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
B=build
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 120 $B/tests/test_llm_matvec 2>&1 | tail -12
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 120 $B/tests/test_llm_e2e devices_match_cpu 2>&1 | tail -6
echo "== tests done $(($(date +%s) - t0)) s"
V=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
for ty in ${TYPES:-q6_k q4_k q8_0}; do
    f=/tmp/m_$ty.gguf
    $B/nvhcq gen-model --preset llama-3.2-1b --type $ty --vocab $V -o $f >/dev/null 2>&1 || echo "gen $ty failed"
    for mv in ${VARIANTS:-q8 f32}; do
        e="NVHCQ_MVQ="
        [ $mv = f32 ] && e="NVHCQ_MV=f32"
        case $mv in q8 | f32) ;; host) e="NVHCQ_LOGITS=host" ;; *) e="NVHCQ_MVQ=$mv" ;; esac
        echo "-- $ty $mv"
        env $e timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|error" | tail -2
    done
done
f=/tmp/m_q6_k.gguf
for mv in ${PROFILE_VARIANTS:-q8}; do
    echo "-- profile $mv"
    env NVHCQ_MVQ=$([ $mv = q8 ] || echo $mv) timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 2 --profile --dev rm:0 2>&1 | tail -12
done
timeout 60 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 2 --dev cuda:0 2>&1 | grep tg
[ -n "${DEPTH:-}" ] && timeout 120 $B/nvhcq llm-bench -m $f -p 0 -n 64 -r 2 -d $DEPTH --dev rm:0 2>&1 | grep tg
echo "decode3 done after $(($(date +%s) - t0)) s"

#!/bin/bash
# s112.sh OUT - session 15 (ask nvidia-h200; carry .anchor .llqb .commit; <= 9.5 min): on an H200
# the H200 evidence (s86.sh). On an H100: the final tree's perplexity against llama-perplexity on
# the same files and text (bench/final/ppl.sh: TinyStories-656K and the five llama-quantize
# LLaMA-3.2-1B-shaped files, rm:0 and cuda:0; last run in session 9, before the Q5_KR / Q4_KR
# repacks, the two-group kernels and this session's dequant path), and tg128 rm:0 vs cuda:0 on the
# same five files (the issue asks that rm beat cuda on the same kernels) with nothing else running.
set -u
OUT=${1:?usage: s112.sh OUT}
mkdir -p "$OUT"
g=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $g"
case "$g" in *H200*) exec bash bench/final/s86.sh "$OUT" ;; esac
. bench/final/lib.sh
make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
ll_build_bg
quant_files Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M
echo "files ready ($(($(date +%s) - T0)) s)"
ll_wait || exit 1
DEVS="rm:0 cuda:0" PPL_TIMEOUT=120 bash bench/final/ppl.sh build /tmp/ppl "$LL/b/bin" \
    /tmp/q/Q4_K_M.gguf /tmp/q/Q6_K.gguf /tmp/q/Q8_0.gguf /tmp/q/Q4_0.gguf /tmp/q/Q5_K_M.gguf >"$OUT/ppl.log" 2>&1
cp /tmp/ppl/ppl.md "$OUT/a_ppl.md"; cp /tmp/ppl/ppl.json "$OUT/a_ppl.json"
grep -E "^\|" "$OUT/a_ppl.md"
echo "ppl done ($(($(date +%s) - T0)) s)"
for f in Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M; do
    [ $(($(date +%s) - T0)) -lt 540 ] || break
    echo "$f [rm:0] tg128: $(tg_cell build/nvhcq /tmp/q/$f.gguf rm:0)"
    echo "$f [cuda:0] tg128: $(tg_cell build/nvhcq /tmp/q/$f.gguf cuda:0)"
done 2>&1 | tee "$OUT/a_tg.txt"
echo "== end $(($(date +%s) - T0)) s"

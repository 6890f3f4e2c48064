#!/bin/bash
# s137.sh OUT - session 18's last call (either GPU; carry .llqb .commit; ~3 min, what the budget
# left): tg128 on the five llama-quantize files at the session's final tree, defaults only (no
# environment): Q4_0's gate|up on the two-group kernel and Q6_K on the _w2 kernels as compiled-in
# defaults, where s134 / s135 set them by environment.
set -u
OUT=${1:?usage: s137.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
quant_files Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
for ty in Q4_K_M Q6_K Q8_0 Q4_0 Q5_K_M; do
    echo "$ty [final] tg128: $(tg_cell build/nvhcq /tmp/q/$ty.gguf rm:0)"
done 2>&1 | tee "$OUT/a_tg.txt"
echo "== end $(($(date +%s) - T0)) s"

#!/bin/bash
# ppl-vs-llamacpp.sh - perplexity agreement with llama.cpp on the same GGUF file and the same text.
#
#   bench/ppl-vs-llamacpp.sh BUILD_DIR OUTDIR LLAMA_BIN_DIR [QUANT_GGUF...]
#
# For the TinyStories-656K model (tests/data/models) and each quantized file given (e.g. 1B files of
# several quant types):
# runs `BUILD_DIR/nvhcq perplexity -m FILE -f TEXT -c CTX --dev D` for each D in DEVS and
# `LLAMA_BIN_DIR/llama-perplexity -m FILE -f TEXT -c CTX -ngl 99` (both implement
# llama-perplexity's method: docs/llm.md), reads each "Final estimate: PPL = X +/- Y" and
# prints both estimates and their relative difference; the target is |nvhcq - llama| /
# llama <= 0.5% (PASS/FAIL per row). Logs, OUTDIR/ppl.md and OUTDIR/ppl.json are written.
# Environment: DEVS (default "rm:0 cuda:0"), PPL_TEXT (default tests/data/text/story-ppl.txt,
# 423 TinyStories tokens), PPL_CTX (default 128: the text must hold 2 x CTX tokens of each
# model's tokenizer), PPL_TIMEOUT (seconds per command, default 600), PPL_TARGET_PCT (0.5).
# Always exits 0: a missing binary, a failed run or an unparsable log is a FAIL row.
set -u
build=${1:?usage: bench/ppl-vs-llamacpp.sh BUILD_DIR OUTDIR LLAMA_BIN_DIR [QUANT_GGUF...]}
out=${2:?usage: bench/ppl-vs-llamacpp.sh BUILD_DIR OUTDIR LLAMA_BIN_DIR [QUANT_GGUF...]}
lbin=${3:?usage: bench/ppl-vs-llamacpp.sh BUILD_DIR OUTDIR LLAMA_BIN_DIR [QUANT_GGUF...]}
shift 3
root=$(cd "$(dirname "$0")/.." && pwd)
DEVS=${DEVS:-rm:0 cuda:0}
TEXT=${PPL_TEXT:-$root/tests/data/text/story-ppl.txt}
CTX=${PPL_CTX:-128}
TMO=${PPL_TIMEOUT:-600}
TARGET=${PPL_TARGET_PCT:-0.5}
nvhcq=$build/nvhcq
llama=$lbin/llama-perplexity
mkdir -p "$out" || { echo "ppl: cannot create $out"; echo "FAIL"; exit 0; }

# The last "Final estimate: PPL = X" of a log (either tool), or nothing.
final_ppl() {
    grep -o 'Final estimate: PPL = [-+0-9.eEnaif]*' "$1" 2>/dev/null | tail -n 1 | sed 's/.*= //'
}
# 100 * |a - b| / b, or nothing when either is not a positive finite number.
rel_pct() {
    awk -v a="$1" -v b="$2" 'BEGIN {
        re = "^[-+]?[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?$"
        if (a !~ re || b !~ re || b + 0 <= 0) exit 1
        d = a - b; if (d < 0) d = -d; printf "%.4f", 100 * d / b }'
}
# within TARGET percent?
within() { awk -v r="$1" -v t="$TARGET" 'BEGIN { exit !(r + 0 <= t + 0) }'; }

rows=$out/rows.tsv
: >"$rows"
fails=0
compare() { # NAME FILE
    local name=$1 file=$2 lp np r verdict d safe
    local llog=$out/llama-$name.log
    if [ ! -f "$file" ]; then
        echo "ppl: $name: $file not found" | tee "$llog"
    elif [ ! -x "$llama" ]; then
        echo "ppl: $llama: not an executable" | tee "$llog"
    else
        echo "== $name: llama-perplexity -c $CTX -ngl 99" >&2
        timeout "$TMO" "$llama" -m "$file" -f "$TEXT" -c "$CTX" -ngl 99 >"$llog" 2>&1 ||
            echo "ppl: llama-perplexity exited with status $?" >>"$llog"
    fi
    lp=$(final_ppl "$llog")
    for d in $DEVS; do
        safe=$(echo "$d" | tr ':/' '__')
        local nlog=$out/nvhcq-$name-$safe.log
        if [ ! -x "$nvhcq" ]; then
            echo "ppl: $nvhcq: not an executable" >"$nlog"
        elif [ -f "$file" ]; then
            echo "== $name: nvhcq perplexity --dev $d" >&2
            timeout "$TMO" "$nvhcq" perplexity -m "$file" -f "$TEXT" -c "$CTX" --dev "$d" >"$nlog" 2>&1 ||
                echo "ppl: nvhcq perplexity exited with status $?" >>"$nlog"
        else
            echo "ppl: $file not found" >"$nlog"
        fi
        np=$(final_ppl "$nlog")
        if r=$(rel_pct "$np" "$lp") && within "$r"; then
            verdict=PASS
        else
            verdict=FAIL
            fails=$((fails + 1))
            [ -n "$r" ] || r=-
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$d" "${np:--}" "${lp:--}" "$r" "$verdict" >>"$rows"
        printf '%-12s %-8s nvhcq PPL %-10s llama.cpp PPL %-10s rel. diff %s%% %s\n' "$name" "$d" "${np:--}" \
            "${lp:--}" "$r" "$verdict"
        if [ "$verdict" = FAIL ]; then # show why
            tail -n 3 "$nlog" "$llog" 2>/dev/null | sed 's/^/    | /'
        fi
    done
}

compare tinystories "$root/tests/data/models/tinystories-656k.gguf"
for q in "$@"; do compare "$(basename "$q" .gguf)" "$q"; done

commit=${NVHCQ_COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
{
    echo "# Perplexity: nvhcq vs llama.cpp (same file, same text)"
    echo
    echo "commit $commit; GPU: ${gpu:-unknown}; text: $(basename "$TEXT"); -c $CTX; target: within $TARGET%"
    echo
    echo "| model | nvhcq device | nvhcq PPL | llama.cpp PPL (-ngl 99) | rel. diff % | |"
    echo "|---|---|---:|---:|---:|---|"
    awk -F '\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }' "$rows"
    echo
    echo "Command: bench/ppl-vs-llamacpp.sh BUILD_DIR OUTDIR LLAMA_BIN_DIR $*"
} >"$out/ppl.md"
awk -F '\t' -v c="$commit" -v g="${gpu:-unknown}" -v x="$CTX" '
    function num(v) { return v ~ /^[-+]?[0-9]*[.]?[0-9]+([eE][-+]?[0-9]+)?$/ ? v : "null" }
    BEGIN { printf "[" }
    {
        fmt = "%s\n  {\"model\": \"%s\", \"device\": \"%s\", \"nvhcq_ppl\": %s, \"llama_ppl\": %s, "
        fmt = fmt "\"rel_diff_pct\": %s, \"verdict\": \"%s\", \"n_ctx\": %d, \"commit\": \"%s\", \"gpu\": \"%s\"}"
        printf fmt, (NR > 1 ? "," : ""), $1, $2, num($3), num($4), num($5), $6, x, c, g
    }
    END { printf "\n]\n" }' "$rows" >"$out/ppl.json"
echo
cat "$out/ppl.md"
if [ "$fails" -eq 0 ] && [ -s "$rows" ]; then
    echo "ppl: PASS (every row within $TARGET%)"
else
    echo "ppl: FAIL ($fails of $(wc -l <"$rows") rows not within $TARGET% or not measured)"
fi
exit 0

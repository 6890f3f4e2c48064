#!/bin/bash
# vs-llamacpp-batched.sh - nvhcq's batched decode against llama-batched-bench on the very same GGUF
# files, in one command: the record bench/results/<gpu>/batched-decode.json.
#
#   bench/vs-llamacpp-batched.sh LLAMA_CPP_BIN_DIR [OUTDIR]
#
# LLAMA_CPP_BIN_DIR holds llama.cpp's llama-batched-bench (a CUDA build, e.g. from the anchor kit's
# build.sh). The script
#   1. writes a model per type in TYPES with `nvhcq gen-model --preset PRESET --type T` (random
#      weights; gen-model's q4_k is Q4_K_M's mix),
#   2. runs `nvhcq llm-bench --batch NPL -p PP -n TG --dev DEV` and `llama-batched-bench -ngl 99 -fa on
#      -npp PP -ntg TG -npl NPL -c (largest B x (PP + TG) + 512)` on each file, one after the other,
#   3. writes OUTDIR/batched-decode.json (meta: GPU, driver, commit, date, command; a row per engine,
#      type and B with S_PP and S_TG, nvhcq's step p50 / p99) and OUTDIR/batched-decode.md (S_TG and
#      the ratio per B). Copy the JSON to bench/results/<gpu>/ and run `make perf-report`.
# Environment: NVHCQ (default ./build/nvhcq), DEV (rm:0), TYPES ("q4_k q8_0 bf16"), PRESET
# (llama-3.2-1b), VOCAB (tests/data/tokenizers/ggml-vocab-gpt-2.gguf), NPL (1,8,32,64), PP (128),
# TG (128), NVHCQ_COMMIT (the commit to stamp where the tree has no .git). The numbers mean
# something only on a GPU; the script runs anywhere both tools do (a CPU build of llama.cpp and
# DEV=cpu check it). Exit status 1 when a tool failed, 2 on bad usage.
set -euo pipefail
bin=${1:?usage: bench/vs-llamacpp-batched.sh LLAMA_CPP_BIN_DIR [OUTDIR]}
out=${2:-bench-vs-llamacpp-batched}
NVHCQ=${NVHCQ:-./build/nvhcq}
DEV=${DEV:-rm:0}
TYPES=${TYPES:-q4_k q8_0 bf16}
PRESET=${PRESET:-llama-3.2-1b}
VOCAB=${VOCAB:-tests/data/tokenizers/ggml-vocab-gpt-2.gguf}
NPL=${NPL:-1,8,32,64}
PP=${PP:-128}
TG=${TG:-128}
for t in "$bin/llama-batched-bench" "$NVHCQ"; do
    [ -x "$t" ] || { echo "vs-llamacpp-batched: $t: not an executable" >&2; exit 2; }
done
case $NPL in *[!0-9,]* | "" | ,* | *, | *,,*) echo "vs-llamacpp-batched: NPL '$NPL': B1,B2,.." >&2; exit 2 ;; esac
bmax=$(tr ',' '\n' <<<"$NPL" | sort -n | tail -n 1)
ctx=$((bmax * (PP + TG) + 512))
mkdir -p "$out/models"
for ty in $TYPES; do
    m=$out/models/$PRESET-$ty.gguf
    [ -f "$m" ] || "$NVHCQ" gen-model --preset "$PRESET" --type "$ty" --vocab "$VOCAB" -o "$m" >"$out/gen-$ty.log" 2>&1 ||
        { tail -5 "$out/gen-$ty.log" >&2; exit 1; }
    echo "== $ty: nvhcq $DEV" >&2
    "$NVHCQ" llm-bench -m "$m" --batch "$NPL" -p "$PP" -n "$TG" --dev "$DEV" >"$out/nvhcq-$ty.md" 2>"$out/nvhcq-$ty.log" ||
        { tail -5 "$out/nvhcq-$ty.log" >&2; exit 1; }
    echo "== $ty: llama-batched-bench" >&2
    "$bin/llama-batched-bench" -m "$m" -ngl 99 -fa on -c "$ctx" -npp "$PP" -ntg "$TG" -npl "$NPL" \
        >"$out/llama-batched-bench-$ty.txt" 2>"$out/llama-batched-bench-$ty.log" ||
        { tail -5 "$out/llama-batched-bench-$ty.log" >&2; exit 1; }
done
dn=$(basename "$VOCAB")
cmdline="bench/vs-llamacpp-batched.sh: nvhcq llm-bench -m FILE --batch $NPL -p $PP -n $TG --dev $DEV and llama-batched-bench -m FILE -ngl 99 -fa on -c $ctx -npp $PP -ntg $TG -npl $NPL on the same gen-model files ($PRESET ${TYPES// /, }; vocab $dn), one after the other per file"
# shellcheck disable=SC2086 # (TYPES: one argument per type)
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}" python3 - "$out" "$cmdline" "$DEV" $TYPES <<'EOF'
import json, sys
from record_meta import meta as record_meta
out, cmdline, dev, types = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]
res = []
for t in types:
    # nvhcq: | PP | TG | B | N_KV | T_PP s | S_PP t/s | T_TG s | S_TG t/s | T s | S t/s | step ms p50 | step ms p99 |
    nv = [c for c in map(cells, open(f"{out}/nvhcq-{t}.md")) if len(c) == 12 and c[0].isdigit()]
    # llama-batched-bench: | PP | TG | B | N_KV | T_PP s | S_PP t/s | T_TG s | S_TG t/s | T s | S t/s |
    lc = [c for c in map(cells, open(f"{out}/llama-batched-bench-{t}.txt")) if len(c) == 10 and c[0].isdigit()]
    if not nv or not lc:
        sys.exit(f"vs-llamacpp-batched: no rows for {t} (nvhcq {len(nv)}, llama.cpp {len(lc)})")
    for c in nv:
        res.append({"engine": "nvhcq " + dev, "type": t, "pp": int(c[0]), "tg": int(c[1]),
                    "b": int(c[2]), "s_pp": float(c[5]), "s_tg": float(c[7]), "step_ms_p50": float(c[10]),
                    "step_ms_p99": float(c[11])})
    for c in lc:
        res.append({"engine": "llama.cpp", "type": t, "pp": int(c[0]), "tg": int(c[1]), "b": int(c[2]),
                    "s_pp": float(c[5]), "s_tg": float(c[7])})
meta = record_meta(cmdline)
json.dump({"meta": meta, "results": res}, open(f"{out}/batched-decode.json", "w"), indent=1)
lines = [f"# nvhcq batched decode vs llama-batched-bench, same files ({meta['gpu']}, driver {meta['driver']}, "
         f"commit {meta['commit']})", "", "| file | B | nvhcq S_TG | llama.cpp S_TG | ratio |", "|---|---:|---:|---:|---:|"]
for t in types:
    ref = {r["b"]: r["s_tg"] for r in res if r["type"] == t and r["engine"] == "llama.cpp"}
    for r in res:
        if r["type"] == t and r["engine"] != "llama.cpp" and r["b"] in ref:
            lines.append(f"| {t} | {r['b']} | {r['s_tg']:.1f} | {ref[r['b']]:.1f} | {r['s_tg'] / ref[r['b']]:.2f}x |")
open(f"{out}/batched-decode.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

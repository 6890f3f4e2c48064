#!/bin/bash
# vs-llamacpp-depth.sh - nvhcq against llama-bench after a filled KV cache, on the very same GGUF
# file, in one command: the record bench/results/<gpu>/vs-llamacpp-depth.json.
#
#   bench/vs-llamacpp-depth.sh LLAMA_CPP_BIN_DIR [OUTDIR]
#
# LLAMA_CPP_BIN_DIR holds llama.cpp's llama-bench (a CUDA build, e.g. from the anchor kit's
# build.sh). The script
#   1. writes one model with `nvhcq gen-model --preset PRESET --type TYPE` (random weights;
#      gen-model's q4_k is Q4_K_M's mix),
#   2. runs `nvhcq llm-bench -p PP -n TG -r REPS -d DEPTHS --no-sampled --dev DEV -o json` and
#      `llama-bench -ngl 99 -fa 1 -p PP -n TG -d DEPTHS -r REPS -o json` on it, one after the other,
#   3. writes OUTDIR/vs-llamacpp-depth.json (meta: GPU, driver, commit, date, command; a row per
#      engine and test: pp<PP> / tg<TG> "@ d<depth>", tokens/s) and OUTDIR/vs-llamacpp-depth.md (the
#      ratio per test, and each engine's tg at every depth as a share of its tg at depth 0). Copy
#      the JSON to bench/results/<gpu>/ and run `make perf-report`.
# Environment: NVHCQ (default ./build/nvhcq), DEV (rm:0), TYPE (q4_k), PRESET (llama-3.2-1b), VOCAB
# (tests/data/tokenizers/ggml-vocab-gpt-2.gguf), DEPTHS (0,4096,32768), PP (512), TG (128), REPS (2),
# NVHCQ_COMMIT (the commit to stamp where the tree has no .git). The numbers mean something only
# on a GPU; the script runs anywhere both tools do (a CPU build of llama.cpp and DEV=cpu check it).
# Exit status 1 when a tool failed, 2 on bad usage.
set -euo pipefail
bin=${1:?usage: bench/vs-llamacpp-depth.sh LLAMA_CPP_BIN_DIR [OUTDIR]}
out=${2:-bench-vs-llamacpp-depth}
NVHCQ=${NVHCQ:-./build/nvhcq}
DEV=${DEV:-rm:0}
TYPE=${TYPE:-q4_k}
PRESET=${PRESET:-llama-3.2-1b}
VOCAB=${VOCAB:-tests/data/tokenizers/ggml-vocab-gpt-2.gguf}
DEPTHS=${DEPTHS:-0,4096,32768}
PP=${PP:-512}
TG=${TG:-128}
REPS=${REPS:-2}
for t in "$bin/llama-bench" "$NVHCQ"; do
    [ -x "$t" ] || { echo "vs-llamacpp-depth: $t: not an executable" >&2; exit 2; }
done
case $DEPTHS in *[!0-9,]* | "" | ,* | *, | *,,*) echo "vs-llamacpp-depth: DEPTHS '$DEPTHS': D1,D2,.." >&2; exit 2 ;; esac
for v in PP TG REPS; do
    case ${!v} in *[!0-9]* | "") echo "vs-llamacpp-depth: $v '${!v}': a number" >&2; exit 2 ;; esac
done
[ "$PP" -gt 0 ] || [ "$TG" -gt 0 ] || { echo "vs-llamacpp-depth: PP and TG both 0: no test" >&2; exit 2; }
mkdir -p "$out/models"
m=$out/models/$PRESET-$TYPE.gguf
[ -f "$m" ] || "$NVHCQ" gen-model --preset "$PRESET" --type "$TYPE" --vocab "$VOCAB" -o "$m" >"$out/gen.log" 2>&1 ||
    { tail -5 "$out/gen.log" >&2; exit 1; }
echo "== nvhcq $DEV" >&2
"$NVHCQ" llm-bench -m "$m" -p "$PP" -n "$TG" -r "$REPS" -d "$DEPTHS" --no-sampled --dev "$DEV" -o json \
    >"$out/nvhcq.json" 2>"$out/nvhcq.log" || { tail -5 "$out/nvhcq.log" >&2; exit 1; }
echo "== llama-bench" >&2
"$bin/llama-bench" -m "$m" -ngl 99 -fa 1 -p "$PP" -n "$TG" -d "$DEPTHS" -r "$REPS" -o json \
    >"$out/llama-bench.json" 2>"$out/llama-bench.log" || { tail -5 "$out/llama-bench.log" >&2; exit 1; }
cmdline="bench/vs-llamacpp-depth.sh: nvhcq llm-bench -m FILE -p $PP -n $TG -r $REPS -d $DEPTHS --no-sampled --dev $DEV and llama-bench -m FILE -ngl 99 -fa 1 -p $PP -n $TG -d $DEPTHS -r $REPS on one gen-model file ($PRESET $TYPE; vocab $(basename "$VOCAB")), one after the other"
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$(dirname "$0")${PYTHONPATH:+:$PYTHONPATH}" python3 - "$out" "$cmdline" "$DEV" <<'EOF'
import json, sys
from record_meta import meta as record_meta
out, cmdline, dev = sys.argv[1:4]
def name(n_prompt, n_gen, depth):
    # llama-bench's test names (pp512, tg128), with " @ d<depth>" past depth 0
    return ("pp%d" % n_prompt if n_prompt else "tg%d" % n_gen) + (" @ d%d" % depth if depth else "")
nv = json.load(open(f"{out}/nvhcq.json"))
lc = json.load(open(f"{out}/llama-bench.json"))
if not nv or not lc:
    sys.exit(f"vs-llamacpp-depth: no rows (nvhcq {len(nv)}, llama-bench {len(lc)})")
ty = nv[0]["type"]  # the file's type as nvhcq names it (both tools read the same file)
res = [{"engine": "llama.cpp", "type": ty, "test": name(r["n_prompt"], r["n_gen"], r.get("n_depth", 0)),
        "tok_s": round(r["avg_ts"], 2)} for r in lc]
res += [{"engine": "nvhcq " + dev, "type": ty, "test": name(r["n_prompt"], r["n_gen"], r.get("n_depth", 0)),
         "tok_s": round(r["avg_ts"], 2)} for r in nv]
meta = record_meta(cmdline)
json.dump({"meta": meta, "results": res}, open(f"{out}/vs-llamacpp-depth.json", "w"), indent=1)
ref = {r["test"]: r["tok_s"] for r in res if r["engine"] == "llama.cpp"}
ours = [r for r in res if r["engine"] != "llama.cpp"]
missing = [r["test"] for r in ours if r["test"] not in ref]
if missing:
    sys.exit("vs-llamacpp-depth: llama-bench has no row for " + ", ".join(missing))
lines = [f"# nvhcq vs llama-bench after a filled KV cache, same file ({meta['gpu']}, driver {meta['driver']}, "
         f"commit {meta['commit']})", "", "| file | test | llama.cpp | nvhcq | ratio |", "|---|---|---:|---:|---:|"]
for r in ours:
    lines.append(f"| {ty} | {r['test']} | {ref[r['test']]:.1f} | {r['tok_s']:.1f} | {r['tok_s'] / ref[r['test']]:.2f}x |")
tg0 = [r for r in ours if r["test"].startswith("tg") and "@" not in r["test"]]
if tg0:
    lines += ["", "tg at depth as a share of tg at depth 0: " + "; ".join(
        f"{r['test']} nvhcq {r['tok_s'] / tg0[0]['tok_s']:.0%}, llama.cpp {ref[r['test']] / ref[tg0[0]['test']]:.0%}"
        for r in ours if r["test"].startswith("tg") and "@" in r["test"])]
open(f"{out}/vs-llamacpp-depth.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

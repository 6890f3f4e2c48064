#!/bin/bash
# vs-llamacpp.sh - nvhcq against llama.cpp on the very same GGUF files, in one command.
#
#   bench/vs-llamacpp.sh LLAMA_CPP_BIN_DIR [OUTDIR]
#
# LLAMA_CPP_BIN_DIR holds llama.cpp's llama-bench and llama-quantize (a CUDA build, e.g. from the
# anchor kit's build.sh). The script
#   1. writes a LLaMA-3.2-1B-shaped f16 model with `nvhcq gen-model --type f16` (random weights),
#   2. quantizes it with llama.cpp's own llama-quantize to each type in TYPES,
#   3. runs `llama-bench -fa 1 -ngl 99 -p PP -n TG -r REPS` and `nvhcq llm-bench` (every device in
#      DEVS) on each file, one after the other in this process tree, same GPU,
#   4. writes OUTDIR/vs-llamacpp.md (table with ratios) and OUTDIR/vs-llamacpp.json.
# Environment: NVHCQ (default ./build/nvhcq), DEVS (default "rm:0 cuda:0"), TYPES (default
# "Q4_K_M Q6_K Q8_0"; Q4_0 and Q5_K_M work too), PP (512), TG (128), REPS (3), DEPTHS (empty;
# e.g. "0,1024,4096": both tools' -d, the tests again after a KV cache of that many tokens),
# PRESET (llama-3.2-1b),
# VOCAB (tests/data/tokenizers/ggml-vocab-gpt-2.gguf), NVHCQ_BENCH_ARGS (extra llm-bench flags).
# The numbers mean something only on a GPU; llama.cpp's rows come from its own llama-bench.
set -euo pipefail
bin=${1:?usage: bench/vs-llamacpp.sh LLAMA_CPP_BIN_DIR [OUTDIR]}
out=${2:-bench-vs-llamacpp}
NVHCQ=${NVHCQ:-./build/nvhcq}
DEVS=${DEVS:-rm:0 cuda:0}
TYPES=${TYPES:-Q4_K_M Q6_K Q8_0}
PP=${PP:-512}
TG=${TG:-128}
REPS=${REPS:-3}
DEPTHS=${DEPTHS:-}
dopt=()
[ -n "$DEPTHS" ] && dopt=(-d "$DEPTHS")
PRESET=${PRESET:-llama-3.2-1b}
VOCAB=${VOCAB:-tests/data/tokenizers/ggml-vocab-gpt-2.gguf}
for t in "$bin/llama-bench" "$bin/llama-quantize" "$NVHCQ"; do
    [ -x "$t" ] || { echo "vs-llamacpp: $t: not an executable" >&2; exit 2; }
done
mkdir -p "$out"
work=$out/models
mkdir -p "$work"
f16=$work/$PRESET-f16.gguf
[ -f "$f16" ] || "$NVHCQ" gen-model --preset "$PRESET" --type f16 --vocab "$VOCAB" -o "$f16" >"$out/gen.log" 2>&1 ||
    { cat "$out/gen.log"; exit 1; }
raw=$out/raw.tsv
: >"$raw"
# records FILE TYPE ENGINE: rows of raw.tsv from a JSON array of benchmark records. llama-bench
# -o json and nvhcq llm-bench -o json write the same fields (n_prompt, n_gen, n_depth, avg_ts,
# stddev_ts), so one reader serves both engines.
records() {
    python3 - "$@" >>"$raw" <<'EOF'
import json, sys
for r in json.load(open(sys.argv[1])):
    test = "pp%d" % r["n_prompt"] if r["n_gen"] == 0 else "tg%d" % r["n_gen"]
    if r.get("n_depth"):
        test += "_@_d%d" % r["n_depth"]
    print("\t".join([sys.argv[2], sys.argv[3], test, "%.2f" % r["avg_ts"], "%.2f" % r["stddev_ts"], ""]))
EOF
}
for ty in $TYPES; do
    m=$work/$PRESET-$ty.gguf
    if [ ! -f "$m" ]; then
        "$bin/llama-quantize" "$f16" "$m" "$ty" >"$out/quantize-$ty.log" 2>&1 ||
            { tail -20 "$out/quantize-$ty.log"; exit 1; }
    fi
    echo "== $ty: llama.cpp" >&2
    "$bin/llama-bench" -m "$m" -fa 1 -ngl 99 -p "$PP" -n "$TG" -r "$REPS" "${dopt[@]}" -o json >"$out/llama-bench-$ty.json" \
        2>"$out/llama-bench-$ty.log" || { tail -20 "$out/llama-bench-$ty.log"; exit 1; }
    records "$out/llama-bench-$ty.json" "$ty" llama.cpp
    for d in $DEVS; do
        dn=${d//:/} # no ':' in file names (some transfer tools refuse them)
        echo "== $ty: nvhcq $d" >&2
        # shellcheck disable=SC2086
        if "$NVHCQ" llm-bench -m "$m" -p "$PP" -n "$TG" -r "$REPS" "${dopt[@]}" --dev "$d" ${NVHCQ_BENCH_ARGS:-} \
            -o json >"$out/nvhcq-$ty-$dn.json" 2>"$out/nvhcq-$ty-$dn.log"; then
            records "$out/nvhcq-$ty-$dn.json" "$ty" "nvhcq $d"
        else
            echo "vs-llamacpp: nvhcq on $d failed on $ty (see $out/nvhcq-$ty-$dn.log)" >&2
            printf '%s\tnvhcq %s\tfailed\t0\t0\t\n' "$ty" "$d" >>"$raw"
        fi
    done
done
cmdline="bench/vs-llamacpp.sh $bin $out (DEVS='$DEVS' TYPES='$TYPES' PP=$PP TG=$TG REPS=$REPS DEPTHS='$DEPTHS' PRESET=$PRESET)"
python3 - "$raw" "$out" "$PP" "$TG" "$cmdline" <<'EOF'
import datetime, json, os, subprocess, sys
raw, out, pp, tg, cmdline = sys.argv[1], sys.argv[2], "pp" + sys.argv[3], "tg" + sys.argv[4], sys.argv[5]
rows = [l.rstrip("\n").split("\t") for l in open(raw) if l.strip()]
def commit():
    if os.environ.get("NVHCQ_COMMIT"):
        return os.environ["NVHCQ_COMMIT"]
    try:
        return subprocess.check_output(["git", "rev-parse", "HEAD"], text=True).strip()
    except Exception:
        return "unknown"
def smi(q):
    try:
        return subprocess.check_output(["nvidia-smi", "--query-gpu=" + q, "--format=csv,noheader"], text=True).strip()
    except Exception:
        return "unknown"
meta = {"commit": commit(), "gpu": smi("name"), "driver": smi("driver_version"), "pp": pp, "tg": tg,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), "command": cmdline}
recs = [{"type": r[0], "engine": r[1], "test": r[2], "tok_s": float(r[3]), "sd": float(r[4])} for r in rows]
json.dump({"meta": meta, "results": recs}, open(out + "/vs-llamacpp.json", "w"), indent=1)
ref = {(r["type"], r["test"]): r["tok_s"] for r in recs if r["engine"] == "llama.cpp"}
lines = ["# nvhcq vs llama.cpp, same files (%s, driver %s, commit %s)" % (meta["gpu"], meta["driver"], meta["commit"][:10]),
         "", "| file | engine | test | tok/s | ± | vs llama.cpp |", "|---|---|---|---:|---:|---:|"]
for r in recs:
    base = ref.get((r["type"], r["test"]))
    ratio = "%.2fx" % (r["tok_s"] / base) if base and r["engine"] != "llama.cpp" else ""
    lines.append("| %s | %s | %s | %.1f | %.1f | %s |" % (r["type"], r["engine"], r["test"], r["tok_s"], r["sd"], ratio))
open(out + "/vs-llamacpp.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
EOF

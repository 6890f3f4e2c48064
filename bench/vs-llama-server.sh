#!/bin/bash
# vs-llama-server.sh - `nvhcq serve` against `llama-server` on the very same GGUF file, measured
# the same way (bench/serve-load.py: streaming clients, temperature 0, fixed lengths), in one command.
#
#   bench/vs-llama-server.sh LLAMA_CPP_BIN_DIR GGUF [OUTDIR]
#
# LLAMA_CPP_BIN_DIR holds llama.cpp's llama-server (a CUDA build, e.g. the anchor kit's build.sh).
# For each server in turn (never both at once, same GPU): start it with N = the largest of CLIENTS
# slots (nvhcq serve --parallel N --ctx-size CTX; llama-server -np N -c N*CTX, each slot CTX
# positions), run serve-load.py at every concurrency of CLIENTS with REQUESTS requests per client
# of MAX_TOKENS tokens (--ignore-eos: every request generates them all), stop it. Then one client
# against `nvhcq serve --parallel 1` (the one-slot path), beside `nvhcq llm-bench -p 0 -n MAX_TOKENS`.
# Writes OUTDIR/{nvhcq,nvhcq-p1,llama-server}.json (serve-load.py's rows), OUTDIR/llm-bench.md,
# OUTDIR/vs-llama-server.md (aggregate tokens/s and TTFT side by side, the ratio) and
# OUTDIR/serve.json, the record for bench/results/<gpu>/ (bench/perf_report.py renders it).
# Environment: NVHCQ (./build/nvhcq), DEV (rm:0), CLIENTS (1,8,32,64), REQUESTS (4), MAX_TOKENS
# (128), CTX (512), PORT (18080). The numbers mean something only on a GPU.
set -euo pipefail
bin=${1:?usage: bench/vs-llama-server.sh LLAMA_CPP_BIN_DIR GGUF [OUTDIR]}
model=${2:?usage: bench/vs-llama-server.sh LLAMA_CPP_BIN_DIR GGUF [OUTDIR]}
out=${3:-bench-vs-llama-server}
NVHCQ=${NVHCQ:-./build/nvhcq}
DEV=${DEV:-rm:0}
CLIENTS=${CLIENTS:-1,8,32,64}
REQUESTS=${REQUESTS:-4}
MAX_TOKENS=${MAX_TOKENS:-128}
CTX=${CTX:-512}
PORT=${PORT:-18080}
for t in "$bin/llama-server" "$NVHCQ"; do
    [ -x "$t" ] || { echo "vs-llama-server: $t: not an executable" >&2; exit 2; }
done
[ -f "$model" ] || { echo "vs-llama-server: $model: no such file" >&2; exit 2; }
mkdir -p "$out"
n=$(echo "$CLIENTS" | tr ',' '\n' | sort -n | tail -1)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null' EXIT

# start "$@" in the background and wait (up to 5 min: weights load, CUDA graphs) for /health
up() {
    "$@" >"$out/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 1500); do
        curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && return 0
        kill -0 "$pid" 2>/dev/null || { echo "vs-llama-server: $1 exited: $(tail -3 "$out/server.log")" >&2; exit 1; }
        sleep 0.2
    done
    echo "vs-llama-server: $1 did not answer /health" >&2
    exit 1
}
down() {
    kill -TERM "$pid"
    wait "$pid" || true
    pid=
}
load() { # label json clients
    python3 bench/serve-load.py --url "http://127.0.0.1:$PORT" --clients "$3" --requests "$REQUESTS" \
        --max-tokens "$MAX_TOKENS" --ignore-eos --label "$1" --json "$out/$2.json"
}

up "$NVHCQ" serve -m "$model" --dev "$DEV" --port "$PORT" --parallel "$n" --ctx-size "$CTX" --max-queue 1024
load "nvhcq --parallel $n" nvhcq "$CLIENTS"
down
up "$bin/llama-server" -m "$model" -ngl 99 -fa on -np "$n" -c $((n * CTX)) --port "$PORT"
load "llama-server -np $n" llama-server "$CLIENTS"
down
up "$NVHCQ" serve -m "$model" --dev "$DEV" --port "$PORT" --parallel 1 --ctx-size "$CTX"
load "nvhcq --parallel 1" nvhcq-p1 1
down
"$NVHCQ" llm-bench -m "$model" --dev "$DEV" -p 0 -n "$MAX_TOKENS" -r 3 --no-sampled >"$out/llm-bench.md"

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
commit=${NVHCQ_COMMIT:-$(git rev-parse --short=10 HEAD 2>/dev/null || echo unknown)}
cmd="bench/vs-llama-server.sh (DEV=$DEV CLIENTS=$CLIENTS REQUESTS=$REQUESTS MAX_TOKENS=$MAX_TOKENS CTX=$CTX) on $(basename "$model")"
python3 - "$out" "${gpu:-no GPU, $DEV}" "$commit" "$cmd" <<'PY'
import datetime, json, sys
out, gpu, commit, cmd = sys.argv[1:5]
a = {r["clients"]: r for r in json.load(open(out + "/nvhcq.json"))["rows"]}
b = {r["clients"]: r for r in json.load(open(out + "/llama-server.json"))["rows"]}
p1 = json.load(open(out + "/nvhcq-p1.json"))["rows"][0]
f = lambda x, d=1: "-" if x is None else "%.*f" % (d, x)
lines = ["| clients | nvhcq tok/s | llama-server tok/s | ratio | nvhcq TTFT p50 / p99 ms | llama-server TTFT p50 / p99 ms |",
         "|---:|---:|---:|---:|---:|---:|"]
for c in sorted(a):
    x, y = a[c], b.get(c, {})
    r = x["agg_tok_s"] / y["agg_tok_s"] if y.get("agg_tok_s") else None
    ms = lambda v: None if v is None else v * 1000
    lines.append("| %d | %s | %s | %s | %s / %s | %s / %s |" % (c, f(x["agg_tok_s"]), f(y.get("agg_tok_s")),
                 f(r, 2) + "x" if r else "-", f(ms(x["ttft_p50_s"])), f(ms(x["ttft_p99_s"])),
                 f(ms(y.get("ttft_p50_s"))), f(ms(y.get("ttft_p99_s")))))
lines.append("")
lines.append("One client, `nvhcq serve --parallel 1`: %s tokens/s decoding per request (llm-bench: see llm-bench.md)."
             % f(p1["decode_tok_s_mean"]))
open(out + "/vs-llama-server.md", "w").write("\n".join(lines) + "\n")
name, _, drv = gpu.partition(", ")
meta = {"gpu": name, "driver": drv or "unknown", "commit": commit, "command": cmd,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}
res = [dict(r, engine="nvhcq") for r in a.values()] + [dict(r, engine="llama-server") for r in b.values()] + \
      [dict(p1, engine="nvhcq --parallel 1")]
json.dump({"meta": meta, "results": res}, open(out + "/serve.json", "w"), indent=1)
print("\n".join(lines))
PY

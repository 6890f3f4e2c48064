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
# llama-server runs twice: with its defaults (every slot samples on the host through the default
# chain, even at temperature 0) and with --backend-sampling (its experimental sampling on the GPU;
# skipped when the build lacks it); the ratio is against the faster of the two at each concurrency.
# Writes OUTDIR/{nvhcq,nvhcq-p1,llama-server,llama-server-bs}.json (serve-load.py's rows),
# OUTDIR/llm-bench.md, OUTDIR/serve.json, the record for bench/results/<gpu>/, and
# OUTDIR/vs-llama-server.md, that record as bench/perf_report.py renders it into docs/performance.md.
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

# start "$@" in the background and wait (up to 5 min: weights load, CUDA graphs) for /health;
# 1 (the server's last words on stderr) when it exits or does not answer
up() {
    "$@" >"$out/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 1500); do
        curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && return 0
        if ! kill -0 "$pid" 2>/dev/null; then
            pid=
            echo "vs-llama-server: $* exited: $(grep -m3 -i "error\|assert\|fail" "$out/server.log" ||
                tail -3 "$out/server.log")" >&2
            return 1
        fi
        sleep 0.2
    done
    echo "vs-llama-server: $1 did not answer /health" >&2
    return 1
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

up "$NVHCQ" serve -m "$model" --dev "$DEV" --port "$PORT" --parallel "$n" --ctx-size "$CTX" --max-queue 1024 || exit 1
load "nvhcq --parallel $n" nvhcq "$CLIENTS"
down
up "$bin/llama-server" -m "$model" -ngl 99 -fa on -np "$n" -c $((n * CTX)) --port "$PORT" || exit 1
load "llama-server -np $n" llama-server "$CLIENTS"
down
# (experimental there: a build where it does not start is reported and the defaults stand alone)
if "$bin/llama-server" --help 2>/dev/null | grep -q -- --backend-sampling &&
    up "$bin/llama-server" -m "$model" -ngl 99 -fa on -np "$n" -c $((n * CTX)) --port "$PORT" --backend-sampling; then
    load "llama-server -np $n --backend-sampling" llama-server-bs "$CLIENTS"
    down
fi
up "$NVHCQ" serve -m "$model" --dev "$DEV" --port "$PORT" --parallel 1 --ctx-size "$CTX" || exit 1
load "nvhcq --parallel 1" nvhcq-p1 1
down
"$NVHCQ" llm-bench -m "$model" --dev "$DEV" -p 0 -n "$MAX_TOKENS" -r 3 --no-sampled --json "$out/llm-bench.json" \
    >"$out/llm-bench.md"

gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
commit=${NVHCQ_COMMIT:-$(git rev-parse --short=10 HEAD 2>/dev/null || echo unknown)}
cmd="bench/vs-llama-server.sh (DEV=$DEV CLIENTS=$CLIENTS REQUESTS=$REQUESTS MAX_TOKENS=$MAX_TOKENS CTX=$CTX) on $(basename "$model")"
python3 - "$out" "${gpu:-no GPU, $DEV}" "$commit" "$cmd" <<'PY'
import datetime, json, os, sys
out, gpu, commit, cmd = sys.argv[1:5]
rows = lambda f: json.load(open(os.path.join(out, f)))["rows"]
name, _, drv = gpu.partition(", ")
meta = {"gpu": name, "driver": drv or "unknown", "commit": commit, "command": cmd,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")}
res = [dict(r, engine="nvhcq") for r in rows("nvhcq.json")] + \
      [dict(r, engine="llama-server") for r in rows("llama-server.json")] + \
      [dict(r, engine="nvhcq --parallel 1") for r in rows("nvhcq-p1.json")]
if os.path.exists(os.path.join(out, "llama-server-bs.json")):
    res += [dict(r, engine="llama-server --backend-sampling") for r in rows("llama-server-bs.json")]
# the one-slot server beside the decode speed llm-bench measures in the same call (tg, no HTTP)
lb = json.load(open(os.path.join(out, "llm-bench.json")))
tg = [r for r in (lb["records"] if isinstance(lb, dict) else lb) if r["test"].startswith("tg")]
res += [{"engine": "nvhcq llm-bench", "clients": 1, "test": r["test"], "avg_ts": r["avg_ts"]} for r in tg[:1]]
json.dump({"meta": meta, "results": res}, open(os.path.join(out, "serve.json"), "w"), indent=1)
PY
python3 -c 'import sys; sys.path.insert(0, sys.argv[2]); import perf_report; o = []; perf_report.serve(sys.argv[1], o); print("\n".join(o))' \
    "$out/serve.json" "$(dirname "$0")" | tee "$out/vs-llama-server.md"

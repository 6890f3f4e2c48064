#!/bin/sh
# serve.sh - `nvhcq serve` end to end on cpu with the TinyStories model: starts the server on a
# free port with an API key and a small queue, then tests/suites/serve_client.js drives it with
# the official `openai` npm client (4.95.0, installed into $BUILD/serve-npm from the npm
# registry) and with fetch/sockets: chat, completions, streaming, models, stop strings, bad
# requests (400/401/404/405/413), disconnects, a burst past the queue (429), a 16 x 4 load run,
# temperature-0 answers against `nvhcq run`; bench/serve-load.py against it; all of it again with
# --parallel 4 (the batched worker). Then SIGTERM in the middle of a request: the
# request completes and the server exits 0 (under ASan: no leak). A build without
# libmicrohttpd/jansson must say so. Needs node, npm, curl; in CI they are installed, so a
# missing one is a failure. Last line "serve: N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
cli=$BUILD/nvhcq
model=tests/data/models/tinystories-656k.gguf
npmdir=$BUILD/serve-npm
passed=0
failed=0
tmp=$(mktemp -d)
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
ok() {
    passed=$((passed + 1))
    echo "  ok   $1"
}
bad() {
    failed=$((failed + 1))
    echo "  FAIL $1"
    [ -f "$tmp/err" ] && sed 's/^/    | /' "$tmp/err" | tail -n 15
}
finish() {
    echo "serve: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}
for t in node npm curl; do
    command -v $t >/dev/null 2>&1 || { bad "$t not found (.ci/install-deps.sh installs it)"; finish; }
done
if ! "$cli" serve --help >/dev/null 2>&1; then
    bad "$cli serve --help"
    finish
fi
"$cli" serve -m "$tmp/none.gguf" >"$tmp/out" 2>"$tmp/err" </dev/null
rc=$?
if grep -q "built without the server" "$tmp/err"; then
    [ $rc -eq 1 ] && grep -q "libmicrohttpd-dev libjansson-dev" "$tmp/err" && ok "built without the server: says how to get it" ||
        bad "built without the server: exit $rc"
    bad "this build has no server (.ci/install-deps.sh installs libmicrohttpd-dev libjansson-dev)"
    finish
fi
[ $rc -eq 1 ] && grep -q "none.gguf" "$tmp/err" && ok "a model that does not open: exit 1, named" || bad "missing model: exit $rc"
if [ ! -f "$npmdir/node_modules/openai/package.json" ] ||
    ! grep -q '"version": "4.95.0"' "$npmdir/node_modules/openai/package.json"; then
    mkdir -p "$npmdir"
    timeout 300 npm install --no-audit --no-fund --silent --prefix "$npmdir" openai@4.95.0 >"$tmp/err" 2>&1 ||
        { bad "npm install openai@4.95.0 into $npmdir"; finish; }
fi
ok "openai 4.95.0 client in $npmdir"

# the reference answers: `nvhcq run` at temperature 0, same prompt and token count
printf 'Once upon a time, there was a' >"$tmp/prompt.txt"
printf 'Tell me a story about a cat.' >"$tmp/chat_prompt.txt"
"$cli" run -m "$model" --dev cpu --temp 0 -n 24 -f "$tmp/prompt.txt" >"$tmp/compl.txt" 2>"$tmp/err" &&
    "$cli" run -m "$model" --dev cpu --temp 0 -n 24 --chat -p "$(cat "$tmp/chat_prompt.txt")" >"$tmp/chat.txt" 2>"$tmp/err" ||
    { bad "nvhcq run (the reference answers)"; finish; }

port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
key=k-$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
start_server() {
    "$cli" serve -m "$model" --dev cpu --port "$port" --api-key "$key" --ctx-size 512 --max-queue 4 "$@" \
        >"$tmp/out" 2>"$tmp/err" </dev/null &
    pid=$!
    for _ in $(seq 1 150); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && return 0
        kill -0 "$pid" 2>/dev/null || return 1
        sleep 0.2
    done
    return 1
}
if ! start_server; then
    bad "server starts and answers /health"
    finish
fi
ok "server starts and answers /health (port $port)"
grep -q "listening on http://127.0.0.1:$port" "$tmp/err" && ok "binds 127.0.0.1 by default" || bad "binds 127.0.0.1 by default"

# the client suite against the server running ($1 names it in the results)
run_client() {
    timeout 170 node tests/suites/serve_client.js "$(cd "$npmdir" && pwd)" "http://127.0.0.1:$port" "$key" "$tmp" >"$tmp/client" 2>&1
    rc=$?
    grep -E '^  (ok|FAIL) ' "$tmp/client" | sed "s/^  \(ok  \|FAIL\) /&[$1] /"
    grep -E '^    ' "$tmp/client" | head -n 20
    p=$(sed -n 's/^serve_client: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$tmp/client")
    f=$(sed -n 's/^serve_client: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$tmp/client")
    if [ -z "$p" ]; then
        tail -n 20 "$tmp/client" | sed 's/^/    | /'
        bad "[$1] serve_client.js printed no summary (exit $rc)"
    else
        passed=$((passed + p))
        failed=$((failed + f))
    fi
}
run_client "1 slot"

# the load generator of the GPU comparison (bench/serve-load.py) runs against it
python3 bench/serve-load.py --url "http://127.0.0.1:$port" --api-key "$key" --clients 1,3 --requests 2 --max-tokens 16 \
    --ignore-eos --json "$tmp/load.json" >"$tmp/out" 2>"$tmp/err"
[ $? -eq 0 ] && grep -q '| 3 | 6 | 6 | 0 | 96 |' "$tmp/out" && grep -q '"agg_tok_s"' "$tmp/load.json" &&
    ok "bench/serve-load.py: 1 and 3 clients, every token counted" || bad "bench/serve-load.py ($(cat "$tmp/out"))"

# --parallel 4: the same client suite against the batched worker (continuous batching: the same
# temperature-0 answers as `nvhcq run`, disconnects free their slots, the burst and the load run),
# and 4 clients at once all decoding together (nvhcq_slots_busy reaches 4)
kill -TERM "$pid"
wait "$pid"
pid=
if start_server --parallel 4; then
    grep -q "(4 slots, queue 4" "$tmp/err" && ok "--parallel 4: 4 slots" || bad "--parallel 4: 4 slots"
    run_client "4 slots"
    python3 bench/serve-load.py --url "http://127.0.0.1:$port" --api-key "$key" --clients 4 --requests 1 --max-tokens 200 \
        --ignore-eos --warmup 0 >"$tmp/out" 2>"$tmp/err" &
    lpid=$!
    busy=0
    for _ in $(seq 1 100); do
        b=$(curl -s -H "Authorization: Bearer $key" "http://127.0.0.1:$port/metrics" | sed -n 's/^nvhcq_slots_busy //p')
        [ "${b:-0}" -gt "$busy" ] && busy=$b
        [ "$busy" -ge 4 ] && break
        sleep 0.02
    done
    wait "$lpid"
    [ "$busy" -eq 4 ] && grep -q '| 4 | 4 | 4 | 0 | 800 |' "$tmp/out" && ok "--parallel 4: 4 requests decode at once, every token counted" ||
        bad "--parallel 4: at most $busy slots busy ($(cat "$tmp/out"))"
else
    bad "server with --parallel 4 starts"
fi

# SIGTERM while a request streams: it completes, then the server exits 0 (ASan: and leaks nothing)
curl -sN -m 60 -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/completions" \
    -d '{"prompt": "Once upon a time", "temperature": 0, "stream": true}' >"$tmp/drain" 2>/dev/null &
cpid=$!
for _ in $(seq 1 200); do
    [ -s "$tmp/drain" ] && break
    sleep 0.05
done
kill -TERM "$pid"
wait "$cpid"
wait "$pid"
src=$?
pid=
tail -n 2 "$tmp/drain" | grep -q '^data: \[DONE\]$' && grep -q '"finish_reason":"' "$tmp/drain" &&
    ok "SIGTERM: the stream in flight completes" || bad "SIGTERM: the stream in flight completes ($(tail -c 300 "$tmp/drain"))"
[ $src -eq 0 ] && grep -q "draining" "$tmp/err" && grep -q "nvhcq serve: stopped" "$tmp/err" &&
    ok "SIGTERM: drains and exits 0" || bad "SIGTERM: exit $src"
curl -s -m 2 "http://127.0.0.1:$port/health" >/dev/null 2>&1 && bad "port closed after exit" || ok "port closed after exit"

# --timeout 1: a client that sends half a request is closed; --max-queue 0: one request at a time
if start_server --timeout 1 --max-queue 0; then
    node -e '
const net = require("net"), [port, key] = process.argv.slice(1);
const t0 = Date.now();
const s = net.connect(Number(port), "127.0.0.1", () => s.write("POST /v1/completions HTTP/1.1\r\nHost: x\r\n"));
s.on("close", () => { const ms = Date.now() - t0; console.log(ms < 4000 ? "slow ok " + ms : "slow late " + ms); });
const req = () => fetch(`http://127.0.0.1:${port}/v1/completions`, { method: "POST", headers: { Authorization: "Bearer " + key },
    body: JSON.stringify({ prompt: "Once", max_tokens: 300, ignore_eos: true }) }).then((r) => r.status);
Promise.all([req(), req()]).then((st) => console.log("queue0 " + st.sort().join(",")));
' "$port" "$key" >"$tmp/out" 2>&1
    grep -q "^slow ok" "$tmp/out" && ok "--timeout 1: a half-sent request is closed" || bad "--timeout 1 ($(cat "$tmp/out"))"
    grep -q "^queue0 200,429$" "$tmp/out" && ok "--max-queue 0: a second request at once gets 429" || bad "--max-queue 0 ($(cat "$tmp/out"))"
    kill -INT "$pid"
    wait "$pid"
    [ $? -eq 0 ] && ok "SIGINT: exits 0" || bad "SIGINT: exit status"
    pid=
else
    bad "second server (--timeout 1 --max-queue 0) starts"
fi

# --parallel 256 with -b 8: the batch's rows are raised to the slots (a batch of more slots than the
# model's rows used to be refused at start), and a request is answered
if start_server --parallel 256 -b 8; then
    code=$(curl -s -o "$tmp/out" -w '%{http_code}' -H "Authorization: Bearer $key" "http://127.0.0.1:$port/v1/completions" \
        -d '{"prompt": "Once upon a time", "max_tokens": 4, "temperature": 0}')
    grep -q "(256 slots" "$tmp/err" && [ "$code" = 200 ] && grep -q '"completion_tokens":4' "$tmp/out" &&
        ok "--parallel 256 -b 8: starts with 256 slots, answers" || bad "--parallel 256 -b 8: $code $(head -c 300 "$tmp/out")"
    kill -TERM "$pid"
    wait "$pid"
    pid=
else
    bad "server with --parallel 256 -b 8 starts"
fi

# a random-weight model with GPT-2's byte-level vocabulary, sampled at temperature 1 on two slots (the
# batch's device sampler): its byte tokens break UTF-8 sequences off, which once made the server drop
# chunks and the final usage ("cannot build the response"); every chunk must be valid JSON (U+FFFD for
# the broken bytes) and every token counted
m0=$model
model=$tmp/rand.gguf
if "$cli" gen-model --preset tiny --type q8_0 --vocab tests/data/tokenizers/ggml-vocab-gpt-2.gguf -o "$model" \
    >"$tmp/out" 2>"$tmp/err" && start_server --parallel 2; then
    python3 bench/serve-load.py --url "http://127.0.0.1:$port" --api-key "$key" --clients 2 --requests 2 \
        --max-tokens 64 --ignore-eos --temperature 1 >"$tmp/out" 2>"$tmp/err"
    [ $? -eq 0 ] && grep -q '| 2 | 4 | 4 | 0 | 256 |' "$tmp/out" &&
        ok "random byte-level tokens at temperature 1: every chunk valid, every token counted" ||
        bad "random byte-level tokens at temperature 1 ($(cat "$tmp/out" "$tmp/err" | tail -n 3))"
    kill -TERM "$pid"
    wait "$pid"
    pid=
else
    bad "server on a random GPT-2-vocabulary model starts"
fi
model=$m0

# bad options: exit 2 naming them; a port in use: exit 1
"$cli" serve >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "-m FILE is required" "$tmp/err" && ok "serve without -m: exit 2" || bad "serve without -m"
"$cli" serve -m "$model" --parallel 257 >"$tmp/out" 2>"$tmp/err"
[ $? -eq 2 ] && grep -q -- "--parallel" "$tmp/err" && ok "--parallel 257: exit 2, named" || bad "--parallel 257"
"$cli" serve -m "$model" --host localhost >"$tmp/out" 2>"$tmp/err" </dev/null
[ $? -eq 1 ] && grep -q "not a numeric" "$tmp/err" && ok "--host name: exit 1, named" || bad "--host name"
finish

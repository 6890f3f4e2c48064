#!/bin/sh
# cli.sh - the nvhcq command line as a user meets it: every subcommand answers --help (exit 0,
# options with defaults) and rejects an unknown option (exit 2); each bad input
# gives its exit code and a message naming the offending flag or file; a requested device
# that does not open fails demo; the README's LLM quick start prints visible text on cpu;
# run's --show-ids, -f, context-full message, device vs host sampling; tokenize; llm-bench -o json /
# --json, tg<N>s.
# No GPU needed. Run by `make test`; last line "cli: N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
cli="$BUILD/nvhcq"
passed=0
failed=0
tmp=$(mktemp -d)
out=$tmp/out
err=$tmp/err
trap 'rm -rf "$tmp"' EXIT
vocab=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
spm=tests/data/tokenizers/ggml-vocab-llama-spm.gguf

ok() {
    passed=$((passed + 1))
    echo "  ok   $1"
}
bad() {
    failed=$((failed + 1))
    echo "  FAIL $1"
    cat "$out" "$err" 2>/dev/null | sed 's/^/    | /' | tail -n 15
}
# expect NAME RC SUBSTRING -- ARGS...: run nvhcq ARGS (30 s limit: a FIFO must not hang it),
# check the exit status and that stdout+stderr hold SUBSTRING (fixed string).
expect() {
    name=$1 want_rc=$2 want_msg=$3
    shift 4
    timeout 30 "$cli" "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    if [ "$rc" -ne "$want_rc" ]; then
        bad "$name (exit $rc, want $want_rc)"
    elif [ -n "$want_msg" ] && ! cat "$out" "$err" | grep -qF -- "$want_msg"; then
        bad "$name (no '$want_msg' in the output)"
    else
        ok "$name"
    fi
}

if [ ! -x "$cli" ]; then
    echo "cli: $cli not built"
    echo "cli: 0 passed, 1 failed"
    exit 1
fi

echo "-- --help and unknown options, every subcommand"
for c in info devices demo bench run llm-bench gen-model tokenize selftest dmesg-check perplexity serve; do
    expect "$c --help: exit 0, usage" 0 "usage: nvhcq $c" -- "$c" --help
    expect "$c -h: exit 0" 0 "--help" -- "$c" -h
    expect "$c --zzz: exit 2, named" 2 "unknown option '--zzz'" -- "$c" --zzz
done
expect "run --help shows defaults" 0 "[default: 128]" -- run --help
expect "nvhcq with no command: exit 2" 2 "usage: nvhcq" --
expect "unknown command: exit 2" 2 "unknown command 'frobnicate'" -- frobnicate

echo "-- numbers: checked, ranged, the flag named"
"$cli" gen-model --preset tiny --vocab "$vocab" -o "$tmp/tiny.gguf" >"$out" 2>"$err" && ok "gen-model tiny" || bad "gen-model tiny"
m=$tmp/tiny.gguf
expect "run -n -5" 2 "-n -5: out of range" -- run -m "$m" -n -5
expect "run -n abc" 2 "-n 'abc': not an integer" -- run -m "$m" -n abc
expect "run -n 12x" 2 "-n '12x': not an integer" -- run -m "$m" -n 12x
expect "run --temp -1" 2 "--temp -1: out of range" -- run -m "$m" --temp -1
expect "run --temp nan" 2 "--temp 'nan': not a number" -- run -m "$m" --temp nan
expect "run --top-k -1" 2 "--top-k -1: out of range" -- run -m "$m" --top-k -1
expect "run --top-p 5" 2 "--top-p 5: out of range (0..1)" -- run -m "$m" --top-p 5
expect "run --min-p 2" 2 "--min-p 2: out of range" -- run -m "$m" --min-p 2
expect "run -c 0" 2 "-c 0: out of range" -- run -m "$m" -c 0
expect "run -b 0" 2 "-b 0: out of range" -- run -m "$m" -b 0
expect "run --seed -1" 2 "--seed '-1': not a non-negative integer" -- run -m "$m" --seed -1
expect "run -n 99999999999" 2 "-n 99999999999: out of range" -- run -m "$m" -n 99999999999
expect "run -m without a value" 2 "-m needs a value" -- run -m
expect "run without -m" 2 "-m FILE is required" -- run -p hi
expect "run -p and -f" 2 "-p and -f both" -- run -m "$m" -p hi -f "$m"
expect "run --special=1 (a flag takes no value)" 2 "--special takes no value" -- run -m "$m" --special=1
expect "run stray argument" 2 "unexpected argument 'hello'" -- run -m "$m" hello
expect "llm-bench -p -3" 2 "-p -3: out of range" -- llm-bench -m "$m" -p -3
expect "llm-bench -r 0" 2 "-r 0: out of range" -- llm-bench -m "$m" -r 0
expect "llm-bench -p 0 -n 0" 2 "nothing to measure" -- llm-bench -m "$m" -p 0 -n 0
expect "llm-bench -o xml" 2 "expected one of md|json" -- llm-bench -m "$m" -o xml
expect "llm-bench --warmup-ms -5" 2 "out of range" -- llm-bench -m "$m" --warmup-ms -5
expect "llm-bench without -m" 2 "-m FILE is required" -- llm-bench -p 8
expect "gen-model --type foo" 2 "--type 'foo': unknown weight type" -- gen-model --type foo --vocab "$vocab" -o "$tmp/x.gguf"
expect "gen-model --preset huge" 2 "--preset 'huge': expected one of" -- gen-model --preset huge --vocab "$vocab" -o "$tmp/x.gguf"
expect "gen-model --threads 100" 2 "--threads 100: out of range" -- gen-model --threads 100 --vocab "$vocab" -o "$tmp/x.gguf"
expect "gen-model without --vocab" 2 "--vocab FILE is required" -- gen-model -o "$tmp/x.gguf"
expect "tokenize without text" 2 "-p TEXT or -f FILE" -- tokenize -m "$spm"
ts=tests/data/models/tinystories-656k.gguf
story=tests/data/text/story-ppl.txt
expect "perplexity without -f" 2 "-f FILE is required" -- perplexity -m "$ts"
expect "perplexity without -m" 2 "-m FILE is required" -- perplexity -f "$story"
expect "perplexity -c 2" 2 "-c 2: out of range" -- perplexity -m "$ts" -f "$story" -c 2
expect "perplexity --chunks -1" 2 "--chunks -1: out of range" -- perplexity -m "$ts" -f "$story" --chunks -1
expect "bench unknown group" 2 "unknown group 'nosuch'" -- bench nosuch
expect "dmesg-check --since junk" 2 "expected mark:TEXT or ts:SECONDS" -- dmesg-check --file tests/data/klog/h200-mmu-fault-dmesg.txt --since junk

echo "-- files: errno text and path, printed once"
mkfifo "$tmp/fifo"
printf 'not a model\n' >"$tmp/text.txt"
expect "run -m DIR" 1 "$tmp: is a directory, not a GGUF file" -- run -m "$tmp"
expect "run -m FIFO (no hang)" 1 "is a FIFO, not a GGUF file" -- run -m "$tmp/fifo"
expect "run -m missing" 1 "$tmp/none.gguf: No such file or directory" -- run -m "$tmp/none.gguf"
[ "$(grep -c "none.gguf" "$err")" -eq 1 ] && ! grep -q "nvhcq error:" "$err" && ok "the error is printed once" || bad "the error is printed once"
expect "run -m text file names it" 1 "cannot load $tmp/text.txt" -- run -m "$tmp/text.txt"
expect "run -f DIR" 1 "$tmp: is a directory" -- run -m "$m" -f "$tmp"
expect "run -f missing" 1 "$tmp/none.txt: No such file or directory" -- run -m "$m" -f "$tmp/none.txt"
expect "llm-bench -m DIR" 1 "is a directory" -- llm-bench -m "$tmp"
expect "perplexity -f missing" 1 "$tmp/none.txt: No such file or directory" -- perplexity -m "$ts" -f "$tmp/none.txt"
expect "perplexity -m missing" 1 "No such file or directory" -- perplexity -m "$tmp/none.gguf" -f "$story"
expect "tokenize -m missing" 1 "No such file or directory" -- tokenize -m "$tmp/none.gguf" -p hi
expect "gen-model -o into a missing dir" 1 "$tmp/no/x.gguf: No such file or directory" -- gen-model --vocab "$vocab" -o "$tmp/no/x.gguf"
expect "gen-model --vocab missing" 1 "$tmp/none.gguf: No such file or directory" -- gen-model --vocab "$tmp/none.gguf" -o "$tmp/x.gguf"
expect "dmesg-check --file missing" 2 "No such file or directory" -- dmesg-check --file "$tmp/none.log"

echo "-- devices asked for must open"
expect "demo --dev foo" 1 "foo (asked for by --dev) did not open" -- demo --dev foo
expect "demo --dev rm:9" 1 "rm:9 (asked for by --dev) did not open" -- demo --dev rm:9
if ! "$cli" devices | grep -qx "rm:0"; then # no NVIDIA driver here (CI)
    expect "demo --dev rm:0 without a driver" 1 "rm:0 (asked for by --dev) did not open" -- demo --dev rm:0
fi
HCQ_DEV=bogus timeout 60 "$cli" demo >"$out" 2>"$err"
rc=$?
[ $rc -eq 1 ] && grep -q "bogus (asked for by HCQ_DEV) did not open" "$err" && grep -q "demo: FAILED" "$out" &&
    ok "HCQ_DEV=bogus demo fails" || bad "HCQ_DEV=bogus demo fails (exit $rc)"
expect "demo --dev cpu passes" 0 "demo: all checks passed" -- demo --dev cpu
expect "run --dev foo" 1 "unknown backend in spec 'foo'" -- run -m "$m" --dev foo -n 1
expect "bench --devs with one that does not open" 1 "nosuch:0 left out" -- bench latency --quick --devs cpu,nosuch:0

echo "-- run, tokenize, llm-bench on cpu"
# README quick start: its lines with ./build/ -> $BUILD/ and the model in $tmp (.ci/run runs it verbatim)
sed -n '/<!-- quickstart -->/,/<!-- \/quickstart -->/p' README.md | grep '^\./build/nvhcq' |
    sed "s|^\./build/|$BUILD/|; s|tiny\.gguf|$tmp/qs.gguf|g" >"$tmp/qs.sh"
if [ "$(wc -l <"$tmp/qs.sh")" -eq 2 ] && timeout 60 sh -e "$tmp/qs.sh" >"$out" 2>"$err"; then
    vis=$(tr -d ' \n\t' <"$out" | wc -c)
    [ "$vis" -ge 40 ] && ok "README quick start prints visible text ($vis chars)" || bad "README quick start prints visible text ($vis chars)"
else
    bad "README quick start runs"
fi
expect "run on cpu: summary line" 0 "decode 8 tokens" -- run -m "$m" -p Hello -n 8 --dev cpu
expect "run -n -1 -c 32: context full" 0 "context full (32 tokens)" -- run -m "$m" -p Hello -n -1 -c 32 --dev cpu
expect "run -n 100 -c 32: says it stopped early" 0 "fewer than -n" -- run -m "$m" -p Hello -n 100 -c 32 --dev cpu
expect "run --show-ids: prompt ids" 0 "prompt: 1 tokens: 15496" -- run -m "$m" -p Hello -n 4 --show-ids --dev cpu
grep -Eq '\[[0-9]+\]' "$out" && ok "run --show-ids: token ids in the text" || bad "run --show-ids: token ids in the text"
printf 'Hello' >"$tmp/prompt.txt"
expect "run -f FILE" 0 "prompt 1 tokens" -- run -m "$m" -f "$tmp/prompt.txt" -n 2 --dev cpu
expect "run --special" 0 "decode" -- run -m "$m" -p Hello -n 4 --special --temp 0 --dev cpu
expect "tokenize --ids" 0 "[1, 15043, 3186]" -- tokenize -m "$spm" -p "Hello world" --ids
expect "tokenize pieces" 0 "15043 -> ' Hello'" -- tokenize -m "$spm" -p "Hello world"
expect "tokenize control token by name" 0 "50256 -> '<|endoftext|>'" -- tokenize -m "$vocab" -p "Hi<|endoftext|>"
expect "llm-bench -o json" 0 '"test": "tg4"' -- llm-bench -m "$m" -p 8 -n 4 -r 1 --dev cpu -o json --json "$tmp/b.json"
expect "llm-bench --warmup-ms 50" 0 '"test": "tg4"' -- llm-bench -m "$m" -p 0 -n 4 -r 1 --warmup-ms 50 --dev cpu -o json
grep -q '"avg_ts"' "$tmp/b.json" && grep -q '"test": "pp8"' "$tmp/b.json" && grep -q '"type": "Q8_0"' "$tmp/b.json" &&
    ok "llm-bench --json FILE records" || bad "llm-bench --json FILE records"
expect "llm-bench md table" 0 "| tg4 |" -- llm-bench -m "$m" -p 8 -n 4 -r 1 --dev cpu
grep -q '| MB/token | GB/s | % of peak |' "$out" && ok "llm-bench md: traffic columns" || bad "llm-bench md: traffic columns"
grep -qF '| tg4s |' "$out" && ok "llm-bench md: tg4s (sampling on the device)" || bad "llm-bench md: tg4s (sampling on the device)"
# run samples on the device by default; --host-sample samples the logits read back: same text
# (same seed, same uniforms), and another seed gives another text
smp="-p Hello -n 12 --temp 0.8 --seed 9 --repeat-penalty 1.2 --presence-penalty 0.3 --frequency-penalty 0.2 --show-ids --dev cpu"
# shellcheck disable=SC2086
expect "run: device sampler" 0 "decode" -- run -m "$m" $smp
cp "$out" "$tmp/smp_dev"
# shellcheck disable=SC2086
expect "run --host-sample" 0 "decode" -- run -m "$m" $smp --host-sample
cmp -s "$out" "$tmp/smp_dev" && grep -Eq '\[[0-9]+\]' "$out" && ok "run: device and host sampling print the same text" ||
    bad "run: device and host sampling print the same text"
# shellcheck disable=SC2086
expect "run: device sampler, seed 10" 0 "decode" -- run -m "$m" $smp --seed 10
cmp -s "$out" "$tmp/smp_dev" && bad "run: another seed, another text" || ok "run: another seed, another text"
# bytes per token (docs/llm.md): pp8 in one batch reads the weights once (W / 8 a token); tg4 from
# depth d reads W and K/V of d + 2.5 positions a step, so tg grows linearly with the depth and
# (tg4@0 - W) / (tg4@16 - tg4@0) = 2.5 / 16; GB/s = bytes x t/s; no % of peak on cpu
expect "llm-bench traffic fields" 0 '"bytes_per_token"' -- llm-bench -m "$m" -p 8 -n 4 -r 1 --dev cpu -d 0,16,32 -o json
if python3 - "$out" <<'PY'
import json, sys
r = {x["test"]: x for x in json.load(open(sys.argv[1]))}
w = r["pp8"]["bytes_per_token"] * 8
t0, t16, t32 = (r[k]["bytes_per_token"] for k in ("tg4", "tg4 @ d16", "tg4 @ d32"))
ok = t16 > t0 > w > 0 and abs((t32 - t16) - (t16 - t0)) <= 2 and abs((t0 - w) / (t16 - t0) - 2.5 / 16) < 1e-3
ok = ok and all(abs(x["gbps"] - x["bytes_per_token"] * x["avg_ts"] * 1e-9) <= 0.06 + 1e-3 * x["gbps"] for x in r.values())
ok = ok and all(x["pct_peak"] is None and x["peak_gbps"] is None for x in r.values())
sys.exit(0 if ok else 1)
PY
then ok "llm-bench bytes per token: weights, KV growth with depth, GB/s"; else bad "llm-bench bytes per token: weights, KV growth with depth, GB/s"; fi
# perplexity: the story is 423 tokens; -c 512 (the default) needs 1024
expect "perplexity: text under 2 x -c tokens" 1 "tokenizes to only 423 tokens; a context of 512 needs at least 1024" -- perplexity -m "$ts" -f "$story" --dev cpu
expect "perplexity -c 64 --chunks 2" 0 "Final estimate: PPL = " -- perplexity -m "$ts" -f "$story" -c 64 --chunks 2 --dev cpu
grep -Eq '^\[1\][0-9.]+,\[2\][0-9.]+,$' "$out" && ok "perplexity: running estimates [1]x,[2]y," || bad "perplexity: running estimates [1]x,[2]y,"
expect "perplexity: -c above what the engine holds" 2 "out of range (4..1048576)" -- perplexity -m "$ts" -f "$story" -c 2000000 --dev cpu

echo "-- docs/api.md's example builds with the installed headers only"
mkdir -p "$tmp/inc"
cp include/hcq.h include/llm.h "$tmp/inc/" # what `make install` installs
sed -n '/^## A complete program/,/^## Devices/p' docs/api.md | sed -n '/^```c$/,/^```$/p' | sed '1d;$d' >"$tmp/fill.c"
san=
case $BUILD in *san*) san="-fsanitize=address,undefined" ;; esac
if ${CC:-cc} -std=c11 -Wall -Wextra -Werror $san -I"$tmp/inc" "$tmp/fill.c" "$BUILD/libnvhcq.a" -ldl -lm -pthread \
    -o "$tmp/fill" >"$out" 2>"$err"; then
    ok "example compiles"
    HCQ_DEV=cpu "$tmp/fill" >"$out" 2>"$err" && grep -q "x\[999\] = 1.5" "$out" && ok "example runs on cpu" ||
        bad "example runs on cpu"
else
    bad "example compiles"
fi

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

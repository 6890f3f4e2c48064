#!/bin/sh
# chat.sh - `nvhcq chat` on cpu with the TinyStories model, input piped: --help and usage
# errors; two turns, /reset and the first turn again (same answer at temperature 0), EOF ends
# with status 0; the second answer equals `nvhcq run` on the conversation rendered by hand in
# ChatML (the KV cache reuse changes nothing); a template that refuses the conversation is a
# message, not an exit; unknown /commands; Ctrl-C twice at the prompt ends the chat; `nvhcq
# run --chat` renders the same template.
# No GPU needed. Run by `make test`; last line "chat: N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
cli="$BUILD/nvhcq"
passed=0
failed=0
tmp=$(mktemp -d)
out=$tmp/out
err=$tmp/err
trap 'rm -rf "$tmp"' EXIT
ts=tests/data/models/tinystories-656k.gguf

ok() {
    passed=$((passed + 1))
    echo "  ok   $1"
}
bad() {
    failed=$((failed + 1))
    echo "  FAIL $1"
    cat "$out" "$err" 2>/dev/null | sed 's/^/    | /' | tail -n 15
}
# chat INPUT ARGS...: pipe INPUT (printf format) into nvhcq chat (60 s limit)
chat() {
    input=$1
    shift
    # shellcheck disable=SC2059
    printf "$input" | timeout 60 "$cli" chat "$@" >"$out" 2>"$err"
}

if [ ! -x "$cli" ]; then
    echo "chat: $cli not built"
    echo "chat: 0 passed, 1 failed"
    exit 1
fi

echo "-- usage"
timeout 30 "$cli" chat --help >"$out" 2>"$err" && grep -q "usage: nvhcq chat" "$out" && grep -q -- "--chat-template" "$out" &&
    ok "chat --help: exit 0, options" || bad "chat --help: exit 0, options"
timeout 30 "$cli" chat --zzz >"$out" 2>"$err" </dev/null
[ $? -eq 2 ] && grep -q "unknown option '--zzz'" "$err" && ok "chat --zzz: exit 2" || bad "chat --zzz: exit 2"
timeout 30 "$cli" chat >"$out" 2>"$err" </dev/null
[ $? -eq 2 ] && grep -q -- "-m FILE is required" "$err" && ok "chat without -m: exit 2" || bad "chat without -m: exit 2"
timeout 30 "$cli" chat -m "$ts" --dev cpu --chat-template no-such-template >"$out" 2>"$err" </dev/null
[ $? -eq 1 ] && grep -q "neither a built-in name" "$err" && ok "unknown --chat-template: exit 1, names the built-ins" ||
    bad "unknown --chat-template: exit 1, names the built-ins"

echo "-- a conversation (TinyStories, greedy, ChatML: the model has no template of its own)"
args="-m $ts --dev cpu --temp 0 -n 24"
# shellcheck disable=SC2086
chat 'Hello\nTell me a story\n/reset\nHello\n' $args
rc=$?
cp "$out" "$tmp/transcript"
lines=$(wc -l <"$tmp/transcript")
first=$(head -n 1 "$tmp/transcript")
last=$(tail -n 1 "$tmp/transcript")
[ $rc -eq 0 ] && ok "EOF ends the chat with status 0" || bad "EOF ends the chat with status 0 (exit $rc)"
grep -q "template chatml" "$err" && ok "no template in the model: ChatML" || bad "no template in the model: ChatML"
grep -q "(conversation cleared)" "$err" && grep -q "nvhcq chat: 3 answers" "$err" && ok "/reset, 3 answers" ||
    bad "/reset, 3 answers"
[ -n "$first" ] && [ "$lines" -ge 3 ] && [ "$first" = "$last" ] && ok "after /reset the same turn gives the same answer" ||
    bad "after /reset the same turn gives the same answer"
# the second answer: the lines between the first and the last
sed '1d;$d' "$tmp/transcript" >"$tmp/a2"
printf '<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n%s<|im_end|>\n<|im_start|>user\nTell me a story<|im_end|>\n<|im_start|>assistant\n' \
    "$first" >"$tmp/prompt2"
# shellcheck disable=SC2086
timeout 60 "$cli" run $args -f "$tmp/prompt2" >"$tmp/run2" 2>"$err"
if [ -s "$tmp/a2" ] && cmp -s "$tmp/a2" "$tmp/run2"; then
    ok "second answer = nvhcq run on the whole conversation (cached prefix reused)"
else
    { echo "chat:"; cat "$tmp/a2"; echo "run:"; cat "$tmp/run2"; } >"$out"
    bad "second answer = nvhcq run on the whole conversation (cached prefix reused)"
fi

# shellcheck disable=SC2086
timeout 60 "$cli" run $args --chat -p Hello >"$tmp/run1" 2>"$err"
[ "$(cat "$tmp/run1")" = "$first" ] && ok "run --chat -p: the first answer" || bad "run --chat -p: the first answer"
# shellcheck disable=SC2086
timeout 60 "$cli" run $args --chat-template llama3 -p Hello --show-ids >"$out" 2>"$err"
grep -Eq "^prompt: [0-9]+ tokens: 1 " "$err" && ! grep -Eq "^prompt: [0-9]+ tokens: 1 1 " "$err" &&
    ok "run --chat-template llama3: one BOS" || bad "run --chat-template llama3: one BOS"

echo "-- errors inside the chat are messages"
# shellcheck disable=SC2086
chat 'Hi\n/help\n' $args --chat-template gemma2 --system "Be brief."
[ $? -eq 0 ] && grep -q "System role not supported" "$err" && grep -q "nvhcq chat: 0 answers" "$err" &&
    ok "a template's raise_exception: a message, the chat goes on" || bad "a template's raise_exception: a message, the chat goes on"
grep -q "commands: /reset" "$err" && ok "unknown /command: help" || bad "unknown /command: help"
# shellcheck disable=SC2086
chat '//x\n/exit\nHello\n' $args --chat-template llama3
[ $? -eq 0 ] && grep -q "nvhcq chat: 1 answers" "$err" && ok "// sends a leading /; /exit ends" || bad "// sends a leading /; /exit ends"

echo "-- Ctrl-C twice at the prompt ends the chat"
mkfifo "$tmp/fifo"
# shellcheck disable=SC2086
"$cli" chat $args <"$tmp/fifo" >"$out" 2>"$err" &
pid=$!
exec 3>"$tmp/fifo" # keep the input open: only Ctrl-C may end the chat
# a watchdog that ends with the chat (no sleeping process left behind)
(i=0; while [ $i -lt 60 ] && kill -0 $pid 2>/dev/null; do sleep 0.5; i=$((i + 1)); done; kill -KILL $pid 2>/dev/null) &
watchdog=$!
sleep 2
kill -INT $pid 2>/dev/null
sleep 1
kill -INT $pid 2>/dev/null
wait $pid
rc=$?
wait $watchdog
exec 3>&-
[ $rc -eq 0 ] && grep -q "(Ctrl-C again" "$err" && ok "Ctrl-C, Ctrl-C: exit 0" || bad "Ctrl-C, Ctrl-C: exit 0 (exit $rc)"

echo "chat: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

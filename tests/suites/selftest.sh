#!/bin/sh
# selftest.sh - smoke test of `nvhcq selftest` (the report Jetson owners paste into issues):
# on an emulated device it must pass and print every section; on a device that does not
# open it must say why and fail. Run by `make test`; last line "selftest: N passed, N failed".
# It runs on emu:gh100 (rm backend) and emu:ga10b (nvgpu backend, copies_by_cpu: its
# cross-queue copy check is the engine fix of test_nvgpu_pitfalls cross_queue_copy).
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
cli="$BUILD/nvhcq"
passed=0
failed=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
check() { # name, condition (shell test already evaluated as $?)
    if [ "$2" -eq 0 ]; then
        passed=$((passed + 1))
        echo "  ok   $1"
    else
        failed=$((failed + 1))
        echo "  FAIL $1"
        sed 's/^/    | /' "$out" | tail -n 30
    fi
}
if [ ! -x "$cli" ]; then
    echo "selftest: $cli not built"
    echo "selftest: 0 passed, 1 failed"
    exit 1
fi
suite=$BUILD/tests/hcq_suite
for dev in emu:gh100 emu:ga10b; do
    timeout 300 "$cli" selftest --dev "$dev" --quick --suite "$suite" >"$out" 2>&1
    rc=$?
    check "$dev exits 0" $rc
    for section in "### System" "### Device" "### Built-in checks" "### Benchmark" "### HCQ suite" "### Kernel log" "RESULT: PASS"; do
        grep -q "$section" "$out"
        check "$dev report has '$section'" $?
    done
    grep -Eq "hcq_suite --dev $dev: [0-9]+ passed, 0 failed" "$out"
    check "$dev ran the HCQ suite" $?
done
# --report FILE.json: every section as JSON, the extra benchmarks included (tiny model on emu)
rep=$(mktemp)
timeout 300 "$cli" selftest --dev emu:ga10b --quick --no-suite --report "$rep" >"$out" 2>&1
rc=$?
check "emu:ga10b --report exits 0" $rc
for key in '"result": "PASS"' '"driver": "nvgpu+nvmap (usermode submit), L4T r36' '"checks": \[' '"selftest_bench": {' \
    '"group": "matmul"' '"llm_bench": {' '"tg16_tps": [1-9]' '"kernel_log": {'; do
    grep -q "$key" "$rep"
    check "report has $key" $?
done
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$rep" >"$out" 2>&1
    check "report is valid JSON" $?
fi
rm -f "$rep"
timeout 60 "$cli" selftest --dev nosuch:0 --no-bench >"$out" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q "RESULT: FAIL" "$out" && grep -q "HCQ_ERR_INVALID" "$out"
check "unknown device fails with the reason" $?
"$cli" selftest --bogus >"$out" 2>&1
[ $? -eq 2 ] && grep -q "unknown option .--bogus." "$out"
check "bad option prints usage, exit 2" $?
echo "selftest: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# dmesg_check.sh - `nvhcq dmesg-check` on saved kernel logs (no GPU, no root): the H200 log with
# the deliberate MMU fault of tests/hw/rm_bringup --fault must exit 1 and name Xid 31; the same
# log cut before the fault (--since ts:) and a log of routine driver lines must exit 0; a mark
# that is not in the log is reported. Run by `make test`; last line "dmesg_check: N passed, N failed".
BUILD=${BUILD:-build}
cd "$(dirname "$0")/../.." || exit 1
cli="$BUILD/nvhcq"
log=tests/data/klog/h200-mmu-fault-dmesg.txt
passed=0
failed=0
out=$(mktemp)
clean=$(mktemp)
trap 'rm -f "$out" "$clean"' EXIT
check() { # name, status (0 = ok)
    if [ "$2" -eq 0 ]; then
        passed=$((passed + 1))
        echo "  ok   $1"
    else
        failed=$((failed + 1))
        echo "  FAIL $1"
        sed 's/^/    | /' "$out" | tail -n 20
    fi
}
if [ ! -x "$cli" ] || [ ! -f "$log" ]; then
    echo "dmesg_check: $cli or $log missing"
    echo "dmesg_check: 0 passed, 1 failed"
    exit 1
fi
"$cli" dmesg-check --file "$log" >"$out" 2>&1
check "fault log exits 1" $([ $? -eq 1 ]; echo $?)
grep -q "Xid 31 x1" "$out"
check "fault log names Xid 31 once" $?
grep -q "^ERROR  \[Xid 31: MMU fault" "$out"
check "fault line printed with its decoded name" $?
"$cli" dmesg-check --file "$log" --since ts:33.0 --quiet >"$out" 2>&1
check "--since after the fault still sees it" $([ $? -eq 1 ]; echo $?)
"$cli" dmesg-check --file "$log" --since ts:33.653154 >"$out" 2>&1
check "--since at the fault's timestamp exits 0" $?
grep -v "Xid" "$log" >"$clean"
"$cli" dmesg-check --file - <"$clean" >"$out" 2>&1
check "routine driver lines exit 0 (stdin)" $?
"$cli" dmesg-check --file "$log" --since mark:no-such-mark >"$out" 2>&1
grep -q "not found" "$out"
check "missing mark is reported" $?
"$cli" dmesg-check --bogus >"$out" 2>&1
check "bad option exits 2" $([ $? -eq 2 ]; echo $?)
echo "dmesg_check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# aarch64.sh - Jetson is arm64: cross-build everything for aarch64 (NOCUDA=1, build-aarch64/)
# with Debian's cross compiler and run the unit tests and the HCQ suite on emu:ga10b (the
# nvgpu backend on the emulated Orin driver) under qemu-user. Run by `make test`
# (tests/run_all.sh). Inner suites' lines are indented so the total counts them once, here;
# the last line is "aarch64: N passed, N failed[, N skipped]" summed over the inner suites.
# Without the cross tools it skips (counted as skipped, not passed):
#   apt-get install -y gcc-aarch64-linux-gnu qemu-user      (.ci/install-deps.sh does this)
# Environment: AARCH64_JOBS (make -j, default nproc), AARCH64_TIMEOUT (s per binary, 300),
# AARCH64_SKIP (test binaries not run under qemu; they run natively in `make test`). Default:
#   test_llm_e2e  whole-model forward passes take minutes when every instruction is emulated;
#   test_rm       kmd_every_failure_point_leaks_nothing takes ~220 s under qemu (0.1 s natively);
#   test_llm_ppl  runs the nvhcq CLI beside it, which under qemu is an aarch64 binary the host
#                 shell cannot start.
#   test_llm_matvec  every mat-vec kernel's CPU twin over every
#                 type and mode: 156 s under qemu (a CI run on 2 cores), with
#                 CI at ~29 of its 30 minutes; under qemu the mat-vec twin still runs in
#                 test_nvgpu_llm (a Q6_K decode on emu:ga10b), attention in test_llm_attn_decode;
#                 both run natively in `make test` and in the sanitizer pass.
#   test_llm_sample, test_llm_gen_dev  the device sampler's twins over 128256 logits and thousands
#                 of draws, generation on two models: > 300 s and 271 s under qemu (57 s and 27 s
#                 natively, 2026-11-28); they run natively in `make test`.
#   test_llm_gemma  the double reference over a 50257-token head for 127 positions, twice, and
#                 two models' forward passes: 175 s under qemu (9 s natively, 2026-11-28); it runs
#                 natively in `make test` (test_llm_gemma_kernels runs under qemu).
#   test_llm_attn_prefill  five attention kernels' twins against double precision up to 8194
#                 positions: 222 s under qemu (18 s natively, 2026-11-29); it runs natively in
#                 `make test` (attention runs under qemu in test_nvgpu_llm).
#   test_llm_attn_decode, test_llm_dequant  the decode attention's twin against double precision up
#                 to 20,000 positions on cpu and emu:gh100, and the prefill GEMM epilogues: 89 s and
#                 37 s under qemu (9 s and 3 s natively, 2026-11-29), when a CI run of c8c1569 took
#                 1798 of its 1800 s; they run natively in `make test` and in the sanitizer pass.
# Budget (2 cores, each binary's time printed): ~45 s cross-build (objects shared with
# nothing: NOCUDA, build-aarch64/), then ~130 s hcq_suite on emu:ga10b and ~140 s of unit tests.
CC_A64=${CC_A64:-aarch64-linux-gnu-gcc}
QEMU=${QEMU:-qemu-aarch64}
SYSROOT=${AARCH64_SYSROOT:-/usr/aarch64-linux-gnu}
jobs=${AARCH64_JOBS:-$(nproc 2>/dev/null || echo 2)}
limit=${AARCH64_TIMEOUT:-300}
skip_list=${AARCH64_SKIP-test_llm_e2e test_llm_batch test_rm test_llm_ppl test_llm_matvec test_llm_sample test_llm_gen_dev test_llm_gemma test_llm_attn_prefill test_llm_attn_decode test_llm_dequant}
cd "$(dirname "$0")/../.." || exit 1

# The sanitizer pass of .ci/run (BUILD=build-san) would rerun the very same aarch64 binaries.
case ${BUILD:-build} in
    *san*)
        echo "aarch64: SKIPPED in the sanitizer pass (BUILD=$BUILD): the plain pass ran the same aarch64 binaries"
        echo "aarch64: 0 passed, 0 failed, 1 skipped"
        exit 0
        ;;
esac

missing=""
command -v "$CC_A64" >/dev/null 2>&1 || missing="$missing $CC_A64"
command -v "$QEMU" >/dev/null 2>&1 || missing="$missing $QEMU"
[ -d "$SYSROOT" ] || missing="$missing $SYSROOT"
if [ -n "$missing" ]; then
    echo "aarch64: SKIPPED: missing$missing (apt-get install -y gcc-aarch64-linux-gnu qemu-user)"
    echo "aarch64: 0 passed, 0 failed, 1 skipped"
    exit 0
fi

start=$(date +%s)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "aarch64: cross-building with $CC_A64 (make cross-aarch64 NOCUDA=1 -j$jobs)"
if ! make -s cross-aarch64 NOCUDA=1 -j"$jobs" >"$log" 2>&1; then
    sed 's/^/  /' "$log" | tail -n 40
    echo "aarch64: cross-build FAILED"
    echo "aarch64: 0 passed, 1 failed"
    exit 1
fi
B=build-aarch64
file_out=$(file "$B/tests/hcq_suite" 2>/dev/null || true)
case $file_out in
    *aarch64* | *ARM* | "") ;;
    *) echo "aarch64: $B/tests/hcq_suite is not an aarch64 binary: $file_out" ;;
esac

passed=0
failed=0
skipped=0
# run NAME CMD...: run one inner suite under qemu, add its counts.
run() {
    name=$1
    shift
    t0=$(date +%s)
    timeout "$limit" "$QEMU" -L "$SYSROOT" "$@" >"$log" 2>&1
    rc=$?
    sed 's/^/  /' "$log"
    echo "  ($name took $(($(date +%s) - t0)) s under qemu)"
    line=$(grep -E '^[^ ]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -z "$line" ]; then
        echo "  $name: crashed or timed out under qemu (exit $rc, limit ${limit}s)"
        failed=$((failed + 1))
        return
    fi
    p=$(echo "$line" | sed -E 's/^[^ ]+: ([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/^[^ ]+: [0-9]+ passed, ([0-9]+) failed.*/\1/')
    s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
    passed=$((passed + p))
    failed=$((failed + f))
    skipped=$((skipped + ${s:-0}))
    # a suite that printed its counts but exited non-zero without failures still failed
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "  $name: exit status $rc"
        failed=$((failed + 1))
    fi
}

for t in "$B"/tests/test_*; do
    [ -x "$t" ] || continue
    case " $skip_list " in
        *" $(basename "$t") "*)
            echo "aarch64: $(basename "$t") SKIPPED (in AARCH64_SKIP: too slow under qemu, runs natively)"
            skipped=$((skipped + 1))
            continue
            ;;
    esac
    echo "aarch64: $(basename "$t")"
    run "$(basename "$t")" "$t"
done
echo "aarch64: hcq_suite --dev emu:ga10b"
run hcq_suite "$B/tests/hcq_suite" --dev emu:ga10b

echo "aarch64: done in $(($(date +%s) - start)) s"
if [ "$skipped" -gt 0 ]; then
    echo "aarch64: $passed passed, $failed failed, $skipped skipped"
else
    echo "aarch64: $passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]

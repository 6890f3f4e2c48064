#!/bin/sh
# run_all.sh - `make test`: runs every suite, then prints the total as
# "total: N passed, N failed" (the line CI reads). Exit status 1 if anything failed.
# Environment: BUILD (build dir), HCQ_TEST_DEVS (devices for the hcq suite; default:
# every device that opens here: cpu, emu:gh100, emu:ga102, emu:ga10b, cuda:0, rm:0), GPU=1 adds GPU-only suites.
BUILD=${BUILD:-build}
log=$(mktemp)
status=0
run() {
    echo "\$ $*"
    t0=$(date +%s)
    "$@" 2>&1 | tee -a "$log"
    rc=$?
    # CI must stay under 30 minutes on 2 cores: every suite says what it cost
    echo "(took $(($(date +%s) - t0)) s: $*)"
    # tee hides the exit code; a suite that crashed prints no summary line
    if ! tail -n 1 "$log" | grep -Eq '^[^ ]+: [0-9]+ passed, [0-9]+ failed'; then
        echo "$1: crashed or printed no summary" | tee -a "$log"
        echo "crash: 0 passed, 1 failed" >> "$log"
    fi
    return $rc
}
for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    run "$t"
done
# GPU=1 (make test-gpu): mark the kernel log first; after the suites it must hold no GPU
# error, then the deliberate-fault tests run and their Xid is expected.
if [ "${GPU:-0}" = 1 ]; then
    mark=$("$BUILD"/nvhcq dmesg-check --mark 2>/dev/null | tail -n 1)
fi
devs=${HCQ_TEST_DEVS:-$("$BUILD"/nvhcq devices --testable 2>/dev/null || echo cpu)}
# GPU=1: the kernel log is also checked around every test (an Xid fails that test by name).
klog=
[ "${GPU:-0}" = 1 ] && klog=--klog
for d in $devs; do
    run "$BUILD"/tests/hcq_suite --dev "$d" $klog
done
# Device-pair tests on two different emulated GPUs (each suite run above pairs a device with itself).
case " $devs " in *" emu:gh100 "*) case " $devs " in *" emu:ga102 "*)
    run "$BUILD"/tests/hcq_suite --dev emu:gh100 --dev2 emu:ga102 multidevice jit_several_devs small_copies_from_host_buf_transfer ;;
esac ;; esac
# rm peer mappings (HCQ_RM_PEER=1: PCIe pairs are opt-in, docs/rm-backend.md "Peer mappings") on emulated
# gh100 pairs over NVLink and over PCIe: every cross-device copy must go through the mapping.
case " $devs " in *" emu:gh100 "*)
    for p in nvlink pcie; do
        HCQ_RM_PEER=1 HCQ_TEST_EXPECT_PEER=1 run "$BUILD"/tests/hcq_suite --dev emu:gh100,p2p=$p \
            multidevice multidevice_p2p multidevice_signal_wait jit_several_devs small_copies_from_host_buf_transfer
    done ;;
esac
# The nvgpu doorbell-batching knob (docs/jetson.md): the suite again with one doorbell per
# 8 kicks; a wait that did not ring the deferred doorbells first would hang here.
case " $devs " in *" emu:ga10b "*)
    HCQ_NVGPU_DOORBELL_BATCH=8 run "$BUILD"/tests/hcq_suite --dev emu:ga10b ;;
esac
for s in tests/suites/*.sh; do
    [ -f "$s" ] || continue
    case " ${SKIP_SUITES:-} " in *" $(basename "$s" .sh) "*) echo "skipping suite $s (SKIP_SUITES)"; continue ;; esac
    BUILD=$BUILD run sh "$s"
done
if [ "${GPU:-0}" = 1 ]; then
    echo "\$ nvhcq dmesg-check --since $mark"
    "$BUILD"/nvhcq dmesg-check --since "$mark" > "$log.dmesg" 2>&1
    drc=$?
    tail -n 5 "$log.dmesg"
    rm -f "$log.dmesg"
    if [ $drc -eq 0 ]; then
        echo "dmesg: 1 passed, 0 failed" | tee -a "$log"
    else
        echo "dmesg: 0 passed, 1 failed" | tee -a "$log"
    fi
    for d in $devs; do
        case $d in
            rm:* | cuda:* | nvgpu:*) HCQ_TEST_FAULTS=1 run "$BUILD"/tests/hcq_suite --dev "$d" device_lost ;;
        esac
    done
    HCQ_TEST_FAULTS=1 run "$BUILD"/tests/test_cuda fault_device_lost
fi
passed=$(grep -Eo '^[^ ]+: [0-9]+ passed' "$log" | awk '{s+=$2} END {print s+0}')
failed=$(grep -Eo '^[^ ]+: [0-9]+ passed, [0-9]+ failed' "$log" | awk '{s+=$4} END {print s+0}')
rm -f "$log"
echo "total: $passed passed, $failed failed"
[ "$failed" -eq 0 ] || status=1
exit $status

#!/bin/bash
# x2.sh OUT - issue 18 / 16 on two H200s of one host (nvidia-h200-x2), one device call: build;
# the interconnect (nvidia-smi topo); the HCQ suite's device-pair tests on rm:0+rm:1 and
# cuda:0+cuda:1 (and the whole suite on rm:1 and cuda:1, the second GPU alone) with the kernel
# log checked per test; the cross-device bench rows; the kernel log after the run.
set -u
out=${1:?usage: x2.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
nvidia-smi topo -m 2>&1 | head -8
nvidia-smi nvlink -s 2>&1 | head -6
mark=$(build/nvhcq dmesg-check --mark 2>/dev/null | tail -1)
P="multidevice multidevice_p2p multidevice_signal_wait jit_several_devs small_copies_from_host_buf_transfer"
for pair in "rm:0 rm:1" "cuda:0 cuda:1" "rm:0 cuda:1"; do
    set -- $pair
    timeout 200 build/tests/hcq_suite --dev $1 --dev2 $2 --klog $P >"$out/pair_${1%:*}${1#*:}_${2%:*}${2#*:}.log" 2>&1
    echo "pair $1+$2 rc=$?: $(tail -1 "$out/pair_${1%:*}${1#*:}_${2%:*}${2#*:}.log")"
    grep -E "^  (ok|FAIL|skip)|info:|peer|staged" "$out/pair_${1%:*}${1#*:}_${2%:*}${2#*:}.log" | head -14
done
for d in rm:1 cuda:1; do
    timeout 150 build/tests/hcq_suite --dev $d --klog >"$out/suite_${d%:*}1.log" 2>&1
    echo "suite $d rc=$?: $(tail -1 "$out/suite_${d%:*}1.log")"
    grep -E "^  FAIL" "$out/suite_${d%:*}1.log" | head -5
done
echo "== bench $(($(date +%s) - t0)) s"
timeout 150 build/nvhcq bench xdev --devs rm:0,rm:1,cuda:0,cuda:1 --json "$out/xdev.json" 2>&1 | tail -20
echo "== kernel log since the start"
build/nvhcq dmesg-check --since "$mark" 2>&1 | tail -5; echo "dmesg-check rc=$?"
echo "x2 done after $(($(date +%s) - t0)) s"

#!/bin/bash
# x2peer.sh OUT - rm peer mappings (issue 16, docs/rm-backend.md "Peer mappings") on two H200s
# of one host (nvidia-h200-x2), one device call, modelled on x2.sh: build; the interconnect and
# what RM says about P2P (nvidia-smi topo -p2p); the HCQ suite's device-pair tests on rm:0+rm:1
# without HCQ_RM_PEER (staged, today's behaviour) and with HCQ_RM_PEER=1 (must show "N copies
# through a peer mapping, 0 staged"), with the kernel log checked per test; cuda:0+cuda:1 for
# reference; the cross-device bench with HCQ_RM_PEER=1; the kernel log after the run.
# Expected: the rm peer rows of cross_device_copy near CUDA's 170-396 GB/s (NVLink NV18),
# against 19-27.5 GB/s staged (bench/results/nvidia-h200-x2/2026-11-24-two-gpu.md).
set -u
out=${1:?usage: x2peer.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "== build $(($(date +%s) - t0)) s"
nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id --format=csv,noheader
nvidia-smi topo -m 2>&1 | head -8
nvidia-smi topo -p2p rw 2>&1 | head -6
mark=$(build/nvhcq dmesg-check --mark 2>/dev/null | tail -1)
P="multidevice multidevice_p2p multidevice_signal_wait jit_several_devs small_copies_from_host_buf_transfer"
pair() { # NAME DEV1 DEV2 [VAR=VALUE...]
    local name=$1 d1=$2 d2=$3
    shift 3
    env "$@" timeout 200 build/tests/hcq_suite --dev "$d1" --dev2 "$d2" --klog $P >"$out/pair_$name.log" 2>&1
    echo "pair $name rc=$?: $(tail -1 "$out/pair_$name.log")"
    grep -E "^  (ok|FAIL|skip)|error|peer|staged|rm: GPU" "$out/pair_$name.log" | head -16
}
pair rm_staged rm:0 rm:1 HCQ_RM_PEER=0
pair rm_peer rm:0 rm:1 HCQ_RM_PEER=1 HCQ_TEST_EXPECT_PEER=1 HCQ_LOG=info
pair rm_peer_rev rm:1 rm:0 HCQ_RM_PEER=1 HCQ_TEST_EXPECT_PEER=1
pair cuda cuda:0 cuda:1
echo "== bench $(($(date +%s) - t0)) s"
HCQ_RM_PEER=1 timeout 150 build/nvhcq bench xdev --devs rm:0,rm:1,cuda:0,cuda:1 --json "$out/xdev.json" 2>&1 | tail -20
echo "== kernel log since the start"
build/nvhcq dmesg-check --since "$mark" 2>&1 | tail -5
echo "dmesg-check rc=${PIPESTATUS[0]}"
echo "x2peer done after $(($(date +%s) - t0)) s"

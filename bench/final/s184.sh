#!/bin/bash
# s184.sh OUT - session 25 (ask for an H200; carry .commit): on an H200 the H200 half of issue 13
# (s180.sh: s164 + HCQ suite rm:0 --klog + test_llm_e2e), on any other card s183.sh (the A/B of
# HCQ_RM_DMA_MAP=0 / HCQ_RM_MAP_HUGE=1 on the cold allocation path), so no call is a wasted probe.
set -u
OUT=${1:?usage: s184.sh OUT}
. bench/final/lib.sh
if on_h200; then
    bash bench/final/s180.sh "$OUT"
else
    bash bench/final/s183.sh "$OUT"
fi

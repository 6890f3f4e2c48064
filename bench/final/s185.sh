#!/bin/bash
# s185.sh OUT - session 25 (ask for an H200; carry .commit): the new default (no RM mapping for
# GPU-only device memory) under the widest check the card allows in one call: on an H200 s180.sh
# (s164's issue-13 rows + HCQ suite rm:0 --klog + test_llm_e2e), elsewhere s179.sh (the whole
# make test-gpu).
set -u
OUT=${1:?usage: s185.sh OUT}
. bench/final/lib.sh
if on_h200; then
    bash bench/final/s180.sh "$OUT"
else
    bash bench/final/s179.sh "$OUT"
fi

#!/usr/bin/env python3
"""s23_json.py - JSON beside session 23's results (bench/results/nvidia-h100/2026-11-27-s23-*.txt):
latency rows, launch_split lines, map costs, the ramp and the submit split through
results_json.records. The commit is each call's .commit. Run from the repository root."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import write  # noqa: E402

write("bench/results/nvidia-h100", "NVIDIA H100 80GB HBM3", "580.159.04", {
    "2026-11-27-s23-s164a.txt": ("4c8cd25", "bash bench/final/s164.sh OUT"),
    "2026-11-27-s23-s164b.txt": ("4c8cd25", "bash bench/final/s164.sh OUT"),
    "2026-11-27-s23-s166-launch-split.txt": ("1054579", "bash bench/final/s166.sh OUT"),
    "2026-11-27-s23-s167-launch-split.txt": ("e413e71", "bash bench/final/s167.sh OUT"),
    "2026-11-27-s23-s168-ramp.txt": ("19f5e63", "bash bench/final/s168.sh OUT"),
    "2026-11-27-s23-s169-submit-split.txt": ("7f3043b (+ bench/final/patches/s169-submit-timing.patch for the "
                                             "submit split)", "bash bench/final/s169.sh OUT"),
    "2026-11-27-s23-s170-qmd-memo.txt": ("e3f0dcc", "bash bench/final/s170.sh OUT"),
    "2026-11-27-s23-s172-cbuf0-scratch.txt": ("76a011f (PB_CBUF0_SCRATCH=1 then A/B; default from b38cb72)",
                                              "bash bench/final/s172.sh OUT"),
    "2026-11-27-s23-s173-idle-wfi.txt": ("75821f5", "bash bench/final/s173.sh OUT"),
    "2026-11-27-s23-s174-final.txt": ("717a2a1", "bash bench/final/s174.sh OUT"),
})

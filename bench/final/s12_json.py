#!/usr/bin/env python3
"""s12_json.py - JSON beside session 12's text results (bench/results/nvidia-h100/2026-11-26-s12-*)
that the device calls kept as text: the tg128 A/B lines of s75/s77/s79/s81/s82/s83 (and s78's
rm:0 / cuda:0 lines), `llm-bench --profile` tables, and s78's pp2048 table. Records hold the
numbers exactly as stored, with GPU, driver, commit and command; kind = tg | profile | table.
(bench gemm / latency and vs-llamacpp rows have their tools' own JSON.) Run from the repository
root; it rewrites only the .json files it names."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import write  # noqa: E402

R = "bench/results/nvidia-h100"
H100 = "NVIDIA H100 80GB HBM3"
META = {
    "2026-11-26-s12-decode-s75.txt": ("c5a7bb7 + bench/final/patches/s75-*", "bench/final/s75.sh"),
    "2026-11-26-s12-decode-s77.txt": ("76c3750", "bench/final/s77.sh"),
    "2026-11-26-s12-decode-profile.md": ("76c3750", "bench/final/s77.sh"),
    "2026-11-26-s12-s78.md": ("41356d2", "bench/final/s78.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s12-decode-attn-early.md": ("41356d2 + .dev/attn-early.patch (= 9f33162)", "bench/final/s79.sh"),
    "2026-11-26-s12-decode-profile-s80.md": ("9f33162", "bench/final/s80.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s12-decode-q4k-q6k.md": ("5bb4d3d", "bench/final/s81.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s12-decode-w2-all.md": ("s82 tree (k_llm_matvec_q8_<type>_w2 via NVHCQ_MVQ_W2=1)", "bench/final/s82.sh"),
    "2026-11-26-s12-decode-w2-small.md": ("s83 tree (NVHCQ_MVQ_W2 type mask)", "bench/final/s83.sh"),
}

write(R, H100, "580.159.04", META)

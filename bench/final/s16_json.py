#!/usr/bin/env python3
"""s16_json.py - JSON beside session 16's text results (bench/results/nvidia-h100/2026-11-26-s16-*):
the tg128 A/B lines and `llm-bench --profile` tables (results_json.py reads them). vs-llamacpp rows
have the tool's own JSON. Run from the repository root; it rewrites only the .json files it names."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import write  # noqa: E402

META = {
    "2026-11-26-s16-s116-attn-o.md": ("792aa74", "bench/final/s116.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s16-s117-x2w2.md": ("40a84fe", "bench/final/s117.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s16-s118-d2h-kernel.md": ("f322ed5", "bench/final/s118.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s16-s122-s123-xid13.md": ("a51d154 (s122) and e1280bb (s123)", "bench/final/s122.sh, s123.sh (ran on H100)"),
    "2026-11-26-s16-s119-wait-spin.md": ("a2457fc (base) and a2457fc + bench/final/patches/s119-wait-counted.patch (counted)", "bench/final/s119.sh (asked for an H200, ran on H100)"),
}
write("bench/results/nvidia-h100", "NVIDIA H100 80GB HBM3", "580.159.04", META)

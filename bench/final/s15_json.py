#!/usr/bin/env python3
"""s15_json.py - JSON beside session 15's text results (bench/results/nvidia-h100/2026-11-26-s15-*):
the tg128 A/B lines and `llm-bench --profile` tables the device calls of session 15 kept as text
(results_json.py reads them). vs-llamacpp rows have the tool's own JSON. Run from the repository
root; it rewrites only the .json files it names."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import write  # noqa: E402

META = {
    "2026-11-26-s15-s110.md": ("295017b", "bench/final/s110.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s15-s112-rm-vs-cuda.md": ("0fbcdfb", "bench/final/s112.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s15-s107.md": ("0bf3b9a (base) and 0bf3b9a + bench/final/patches/s106-dq-q4kr-q5kr.patch (dq)", "bench/final/s107.sh (asked for an H200, ran on H100; ran s106.sh)"),
}
write("bench/results/nvidia-h100", "NVIDIA H100 80GB HBM3", "580.159.04", META)

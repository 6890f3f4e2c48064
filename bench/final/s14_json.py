#!/usr/bin/env python3
"""s14_json.py - JSON beside session 14's text results (bench/results/nvidia-h100/2026-11-26-s14-*):
the tg128 A/B lines and `llm-bench --profile` tables the device calls s94-s101 kept as text
(results_json.py reads them). vs-llamacpp rows have the tool's own JSON. Run from the repository
root; it rewrites only the .json files it names."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import write  # noqa: E402

META = {
    "2026-11-26-s14-decode-s94.md": ("1b7df35 + bench/final/patches/s94-*.patch, s95-*.patch", "bench/final/s94.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s14-decode-s96.md": ("8bbef8a + bench/final/patches/s96-*.patch, s97-*.patch", "bench/final/s96.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s14-decode-s98.md": ("8bbef8a + bench/final/patches/s98-*.patch", "bench/final/s98.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s14-decode-q5kr.md": ("8bbef8a + bench/final/patches/s99-q5kr.patch (= 467e87a)", "bench/final/s99.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s14-s102.md": ("e38e5f7", "bench/final/s102.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s14-decode-x2-kinds.md": ("89faaa0", "bench/final/s103.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s14-s104.md": ("a7a0c23", "bench/final/s104.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s14-decode-q4kr-x2.md": ("467e87a + bench/final/patches/s101-q4kr.patch, s100-x2-q4_0-q8_0.patch", "bench/final/s101.sh (asked for an H200, ran on H100)"),
}
write("bench/results/nvidia-h100", "NVIDIA H100 80GB HBM3", "580.159.04", META)

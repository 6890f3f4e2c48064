#!/usr/bin/env python3
"""s13_json.py - JSON beside session 13's text results (bench/results/nvidia-h100/2026-11-26-s13-*):
the tg128 A/B lines, `llm-bench --profile` tables and same-file tables the device calls s85-s89
kept as text (results_json.py reads them). vs-llamacpp rows have the tool's own JSON. Run from
the repository root; it rewrites only the .json files it names."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import write  # noqa: E402

META = {
    "2026-11-26-s13-decode-q4k-tasks64.md": ("ffa4dfc + bench/final/patches/s85-q4k-tasks64.patch", "bench/final/s85.sh"),
    "2026-11-26-s13-decode-s87.md": ("4eafc22", "bench/final/s87.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s13-decode-ks2.md": ("4c81e48 + bench/final/patches/s89-ks2-*.patch", "bench/final/s89.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s13-s90.md": ("7f415cc", "bench/final/s90.sh (asked for an H200, ran on H100)"),
    "2026-11-26-s13-decode-red.md": ("8b9af25 + bench/final/patches/s88-acc-red.patch (= b99b971)", "bench/final/s88.sh"),
}
write("bench/results/nvidia-h100", "NVIDIA H100 80GB HBM3", "580.159.04", META)

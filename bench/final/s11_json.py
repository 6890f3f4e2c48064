#!/usr/bin/env python3
"""s11_json.py - JSON beside session 11's text results (bench/results/nvidia-h100/2026-11-26-s11-*):
bench gemm / latency rows (s69), the decode A/B of the x' slots and the prefill GEMM's TMA A/B
(s71), and the s70 vs-llamacpp table whose JSON did not come back. Same converter as s9_json.py.
(The s72 vs-llamacpp JSON files are the script's own.)"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s9_json import convert  # noqa: E402

H100 = "NVIDIA H100 80GB HBM3"
convert({
    "nvidia-h100/2026-11-26-s11-gemm-tma128": (H100, "70c9cad", "bench/final/s69.sh (asked for an H200, ran on H100)"),
    "nvidia-h100/2026-11-26-s11-latency": (H100, "70c9cad", "bench/final/s69.sh (asked for an H200, ran on H100)"),
    "nvidia-h100/2026-11-26-s11-vs-llamacpp-s70": (H100, "70c9cad", "bench/final/s70.sh"),
    "nvidia-h100/2026-11-26-s11-decode-slots": (H100, "28a6f89", "bench/final/s71.sh (asked for an H200, ran on H100)"),
    "nvidia-h100/2026-11-26-s11-prefill-tma": (H100, "28a6f89", "bench/final/s71.sh (asked for an H200, ran on H100)"),
    "nvidia-h100/2026-11-26-s11-decode-prologue": (H100, "97dbe3f", "bench/final/s73.sh"),
    "nvidia-h100/2026-11-26-s11-decode-prologue-e3": (H100, "7823e3c", "bench/final/s74.sh"),
})

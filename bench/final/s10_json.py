#!/usr/bin/env python3
"""s10_json.py - JSON beside session 10's text results (bench/results/nvidia-h100/2026-11-26-s10-*):
the `bench latency` rows of s59-s61 (the A/B headers name each variant) and the vs-llamacpp
tables whose JSON did not come back from the device. Same converter as s9_json.py."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s9_json import convert  # noqa: E402

H100 = "NVIDIA H100 80GB HBM3"
convert({
    "nvidia-h100/2026-11-26-s10-latency-gpget-s59": (H100, "3c6375c", "bench/final/s59.sh"),
    "nvidia-h100/2026-11-26-s10-latency-gpget-s60": (H100, "5532250", "bench/final/s60.sh"),
    "nvidia-h100/2026-11-26-s10-latency-end-qmd-release": (H100, "85cc5ae", "bench/final/s61.sh"),
    "nvidia-h100/2026-11-26-s10-vs-llamacpp-depth": (H100, "3c6375c", "bench/final/s59.sh"),
    "nvidia-h100/2026-11-26-s10-vs-llamacpp": (H100, "85cc5ae", "bench/final/s61.sh"),
    "nvidia-h100/2026-11-26-s10-latency-final": (H100, "25717d2", "bench/final/s62.sh"),
    "nvidia-h100/2026-11-26-s10-latency-s63": (H100, "700462a", "bench/final/s63.sh (asked for an H200, ran on H100)"),
    "nvidia-h100/2026-11-26-s10-latency-release-membar": (H100, "92f349e", "bench/final/s64.sh"),
    "nvidia-h100/2026-11-26-s10-gemm-tma-s66": (H100, "79dfc0c", "bench/final/s66.sh"),
    "nvidia-h100/2026-11-26-s10-gemm-tma": (H100, "6dc0ced", "bench/final/s68.sh"),
    "nvidia-h100/2026-11-26-s10-latency-s65": (H100, "a37469a", "bench/final/s65.sh"),
})

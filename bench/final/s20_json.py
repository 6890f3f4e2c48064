#!/usr/bin/env python3
"""s20_json.py - JSON beside session 20's results (bench/results/nvidia-h100/2026-11-27-s20-*):
tg128 A/B lines and profiles through results_json.records. Run from the repository root."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import write  # noqa: E402

BASE = "8e0ba02"
write("bench/results/nvidia-h100", "NVIDIA H100 80GB HBM3", "580.159.04", {
    "2026-11-27-s20-s146-h16-nwpre.md": (BASE + " + uncommitted change (not kept)",
                                         "s146.sh OUT (the shape of bench/final/s148.sh; not kept)"),
    "2026-11-27-s20-s147-h16-flags.md": (BASE + " + uncommitted change (not kept)",
                                         "s147.sh OUT (the shape of bench/final/s148.sh; not kept)"),
    "2026-11-27-s20-s148-h16-module.md": (BASE + " + bench/final/patches/s148-h16.patch",
                                          "bash bench/final/s148.sh OUT"),
    "2026-11-27-s20-s149-copy.md": (BASE, "bash bench/final/s149.sh OUT"),
    "2026-11-27-s20-s150-one-kernel.md": (BASE + " + bench/final/patches/s150-one.patch",
                                          "bash bench/final/s150.sh OUT"),
    "2026-11-27-s20-s151-embed.md": ("c90082b + the embedding change (committed after)", "bash bench/final/s151.sh OUT"),
    "2026-11-27-s20-s152-embed-q8.md": ("c90082b + the embedding change (committed after)",
                                        "S151_ROUNDS=4 S151_TYPES=\"Q8_0 Q4_K_M\" S151_TESTS=0 bash bench/final/s151.sh OUT"),
})

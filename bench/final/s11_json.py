#!/usr/bin/env python3
"""s11_json.py - JSON beside session 11's text results (bench/results/nvidia-h100/2026-11-26-s11-*):
bench gemm / latency rows (s69), the decode A/B of the x' slots and the prefill GEMM's TMA A/B
(s71), and the s70 vs-llamacpp table whose JSON did not come back. Same converter as s9_json.py.
(The s72 vs-llamacpp JSON files are the script's own.)"""
import json
import os
import re
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


def profile_rows(text):
    """'-- profile <type> [VARIANT]' headers, each followed by llm-bench --profile's kernel table."""
    out, head = [], None
    for line in text.splitlines():
        h = re.match(r"-- profile (\w+) \[(.*)\]", line)
        if h:
            head = {"type": h.group(1), "env": h.group(2)}
            continue
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if head and len(c) == 6 and re.match(r"[0-9]+$", c[1]):
            out.append(dict(head, kernel=c[0], count=int(c[1]), total_us=float(c[2]), us_per_launch=float(c[3]),
                            gb_per_s=float(c[4]) if c[4] else None, pct_of_step=float(c[5])))
    return out


for key, commit, cmd in (("nvidia-h100/2026-11-26-s11-decode-slots-profile", "28a6f89", "bench/final/s71.sh"),
                         ("nvidia-h100/2026-11-26-s11-decode-prologue-profile", "97dbe3f", "bench/final/s73.sh")):
    base = os.path.join("bench/results", key)
    recs = profile_rows(open(base + ".md").read())
    assert recs, base
    with open(base + ".json", "w") as f:
        json.dump({"gpu": H100, "driver": "580.159.04", "commit": commit, "command": cmd,
                   "source": os.path.basename(base) + ".md", "records": recs}, f, indent=1)
        f.write("\n")
    print(f"{base}.json: {len(recs)} records")

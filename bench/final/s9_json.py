#!/usr/bin/env python3
"""s9_json.py - JSON beside session 9's text results (bench/results/nvidia-h{100,200}/2026-11-26-s9-*).

Several session-9 calls kept their rows as the text the tools print (bench latency / bench gemm
rows, `llm-bench` tg cells per A/B variant) or as a markdown table whose JSON did not come back
from the device (H200 vs-llamacpp-depth). This reads those files and writes a .json beside each:
records of the numbers exactly as stored, with GPU, driver, commit and command from META below
(the same facts the .md files and the closing note give). Run from the repository root; it
rewrites only the .json files it names."""
import json
import os
import re

R = "bench/results"
DRV = "580.159.04"
META = {
    "nvidia-h100/2026-11-26-s9-latency-cbuf-prefetch": ("NVIDIA H100 80GB HBM3", "421e12f", "bench/final/s52.sh"),
    "nvidia-h200/2026-11-26-s9-latency-cbuf-prefetch": ("NVIDIA H200", "421e12f", "bench/final/s53.sh"),
    "nvidia-h100/2026-11-26-s9-latency-chain-switches": ("NVIDIA H100 80GB HBM3", "150c76b", "bench/final/s54.sh"),
    "nvidia-h200/2026-11-26-s9-gemm": ("NVIDIA H200", "421e12f", "bench/final/s53.sh"),
    "nvidia-h100/2026-11-26-s9-attn-decode-long": ("NVIDIA H100 80GB HBM3", "4dff3ab", "bench/final/s57.sh"),
    "nvidia-h200/2026-11-26-s9-attn-decode-long": ("NVIDIA H200", "80f1682", "bench/final/s58.sh"),
    "nvidia-h100/2026-11-26-s9-attn-decode-inline-ab": ("NVIDIA H100 80GB HBM3", "30ce39f", "bench/final/s56.sh"),
    "nvidia-h100/2026-11-26-s9-mvq-lb3": ("NVIDIA H100 80GB HBM3", "150c76b", "bench/final/s54.sh"),
    "nvidia-h200/2026-11-26-s9-vs-llamacpp-depth": ("NVIDIA H200", "421e12f", "bench/final/s53.sh"),
}
NUM = r"([-+0-9.]+)"


def bench_rows(text):
    """`nvhcq bench` rows under optional '-- <group> rN [VARIANT]' headers."""
    out, variant = [], None
    for line in text.splitlines():
        h = re.match(r"-- \S+ (r\d+) \[(.*)\]", line)
        if h:
            variant = {"round": h.group(1), "env": h.group(2)}
            continue
        m = re.match(r"(\w+)\s+(\w+)\s+(.*?)\s+(rm:0|cuda:0|cublas)\s+" + NUM + r"\s+" + NUM + r"\s+" + NUM + r"\s+(\S+)", line)
        if m and m.group(5) == "-":
            continue  # an ERROR row: no numbers
        if m:
            rec = {"group": m.group(1), "row": m.group(2), "what": m.group(3).strip(), "device": m.group(4),
                   "median": float(m.group(5)), "best": float(m.group(6)), "p99_side": float(m.group(7)),
                   "unit": m.group(8)}
            if variant:
                rec.update(variant)
            out.append(rec)
    return out


def tg_rows(text):
    """'<type> [rN] [VARIANT] <label>: v ± sd ...' lines of the A/B scripts."""
    out = []
    for line in text.splitlines():
        m = re.match(r"(?:tg128 )?(\w+)(?: (r\d+))? \[(.*?)\](?: ([^:]*):)?\s+(.*)$", line)
        if not m:
            continue
        cells = re.findall(NUM + r" ± " + NUM, m.group(5))
        if not cells:
            continue
        labels = [x.strip() for x in m.group(4).split(",")] if m.group(4) else ["tg128"]
        for lab, (v, sd) in zip(labels, cells):
            out.append({"type": m.group(1), "round": m.group(2), "env": m.group(3), "test": lab,
                        "tokens_per_s": float(v), "stddev": float(sd)})
    return out


def md_table(text):
    out = []
    for line in text.splitlines():
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) == 6 and re.match(NUM + "$", c[3] or "x"):
            out.append({"file": c[0], "engine": c[1], "test": c[2], "tokens_per_s": float(c[3]),
                        "stddev": float(c[4]), "vs_llamacpp": c[5] or None})
    return out


def convert(meta, r=R, drv=DRV):
    """Write <key>.json beside each stored result of meta {key: (gpu, commit, command)}."""
    for key, (gpu, commit, cmd) in meta.items():
        base = os.path.join(r, key)
        src = base + (".md" if os.path.exists(base + ".md") and not os.path.exists(base + ".txt") else ".txt")
        text = open(src).read()
        if src.endswith(".md"):
            recs = md_table(text)
        elif "latency" in key or "gemm" in key:
            recs = bench_rows(text)
        else:
            recs = tg_rows(text)
        assert recs, src
        doc = {"gpu": gpu, "driver": drv, "commit": commit, "command": cmd, "source": os.path.basename(src),
               "records": recs}
        with open(base + ".json", "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"{base}.json: {len(recs)} records")


if __name__ == "__main__":
    convert(META)

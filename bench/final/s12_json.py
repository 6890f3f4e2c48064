#!/usr/bin/env python3
"""s12_json.py - JSON beside session 12's text results (bench/results/nvidia-h100/2026-11-26-s12-*)
that the device calls kept as text: the tg128 A/B lines of s75/s77/s79/s81/s82/s83 (and s78's
rm:0 / cuda:0 lines), `llm-bench --profile` tables, and s78's pp2048 table. Records hold the
numbers exactly as stored, with GPU, driver, commit and command; kind = tg | profile | table.
(bench gemm / latency and vs-llamacpp rows have their tools' own JSON.) Run from the repository
root; it rewrites only the .json files it names."""
import json
import os
import re

R = "bench/results/nvidia-h100"
H100 = "NVIDIA H100 80GB HBM3"
NUM = r"([-+0-9.]+)"
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


def records(text):
    out, prof = [], None
    for line in text.splitlines():
        h = re.match(r"-- profile (\S+)(?: \[(.*)\])?", line)
        if h:
            prof = {"model": h.group(1), "env": h.group(2)}
            continue
        m = re.match(r"^(\S+)(?: (r\d+|d\d+))? \[(.*?)\] ([^:]*):\s+(.*)$", line)
        if m:
            for v, sd in re.findall(NUM + r" ± " + NUM, m.group(5)):
                out.append({"kind": "tg", "model": m.group(1), "round": m.group(2), "variant": m.group(3),
                            "test": m.group(4).strip(), "tokens_per_s": float(v), "stddev": float(sd)})
            continue
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(c) == 6 and re.match(r"[0-9]+$", c[1]) and prof:
            out.append(dict(prof, kind="profile", kernel=c[0], count=int(c[1]), total_us=float(c[2]),
                            us_per_launch=float(c[3]), gb_per_s=float(c[4]) if c[4] else None,
                            pct_of_step=float(c[5])))
        elif line.startswith("|") and len(c) == 6 and re.match(NUM + "$", c[3] or "x"):
            out.append({"kind": "table", "file": c[0], "engine": c[1], "test": c[2], "tokens_per_s": float(c[3]),
                        "stddev": float(c[4]), "vs_llamacpp": c[5] or None})
    return out


for name, (commit, cmd) in META.items():
    src = os.path.join(R, name)
    recs = records(open(src).read())
    assert recs, src
    dst = os.path.splitext(src)[0] + ".json"
    with open(dst, "w") as f:
        json.dump({"gpu": H100, "driver": "580.159.04", "commit": commit, "command": cmd, "source": name,
                   "records": recs}, f, indent=1)
        f.write("\n")
    print(f"{dst}: {len(recs)} records ({', '.join(sorted({r['kind'] for r in recs}))})")

#!/usr/bin/env python3
"""results_json.py - what s12_json.py and s13_json.py share: records() reads the text results the
device calls keep (tg128 A/B lines "MODEL [rN] [VARIANT] TEST: mean ± sd", `llm-bench --profile`
tables under "-- profile MODEL [VARIANT]", vs-llamacpp-style tables) into records of kind tg |
profile | table; write() puts JSON beside each named result file with GPU, driver, commit and
command."""
import json
import os
import re

NUM = r"([-+0-9.]+)"


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


def write(results_dir, gpu, driver, meta):
    """meta: {file name: (commit, command)}; rewrites only the .json files beside those files."""
    for name, (commit, cmd) in meta.items():
        src = os.path.join(results_dir, name)
        recs = records(open(src).read())
        assert recs, src
        dst = os.path.splitext(src)[0] + ".json"
        with open(dst, "w") as f:
            json.dump({"gpu": gpu, "driver": driver, "commit": commit, "command": cmd, "source": name,
                       "records": recs}, f, indent=1)
            f.write("\n")
        print(f"{dst}: {len(recs)} records ({', '.join(sorted({r['kind'] for r in recs}))})")

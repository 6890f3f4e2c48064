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
        rec = latency_record(line)
        if rec:
            out.append(rec)
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


LAT_ROWS = "launch_sync|back_to_back|graph_300|dep_chain_graph|dep_chain_stream|dep_step_graph|dep_step_pdl"
PAIR = r"([0-9A-Za-z][\w+-]*) " + NUM + r" \(p99 " + NUM + r"\)"


def latency_record(line):
    """Session 23's launch-path lines: lib.sh lat_run rows ("VARIANT ROW DEVICE median best p99"),
    tests/hw/launch_split.c lines ("[VARIANT] launch_split DEVICE plain|stamped PART m (p99 x) ..."),
    its map_costs and ramp lines, and the s169 submit-timing patch's "s169 submit split" line."""
    m = re.match(r"^(\S+)\s+(" + LAT_ROWS + r")\s+(\S+:\d+)\s+" + NUM + r"\s+" + NUM + r"\s+" + NUM + r"\s*$", line)
    if m:
        return {"kind": "latency", "variant": m.group(1), "row": m.group(2), "device": m.group(3),
                "median_us": float(m.group(4)), "best_us": float(m.group(5)), "p99_us": float(m.group(6))}
    m = re.match(r"^(?:\[(\S+)\] )?(?:launch_split )?(\S+:\d+) (plain|stamped)\s+(.*)$", line)
    if m:
        parts = {k: {"median_us": float(v), "p99_us": float(p)} for k, v, p in re.findall(PAIR, m.group(4))}
        if parts:
            return {"kind": "launch_split", "variant": m.group(1), "device": m.group(2), "pass": m.group(3),
                    "parts": parts}
    m = re.match(r"^map_costs (\S+) (bar1|host)\s+(.*)$", line)
    if m:
        return {"kind": "map_costs", "device": m.group(1), "memory": m.group(2),
                "parts": {k: {"median_us": float(v), "p99_us": float(p)} for k, v, p in re.findall(PAIR, m.group(3))}}
    m = re.match(r"^ramp (\S+):\s+(.*)$", line)
    if m:
        return {"kind": "ramp", "device": m.group(1), "window_ms": 50,
                "points": [{"start_ms": int(t), "median_us": float(v)} for t, v in re.findall(r"(\d+):" + NUM, m.group(2))]}
    m = re.match(r"^s169 submit split over (\d+) submissions \(us\):\s+(.*)$", line)
    if m:
        return {"kind": "submit_split", "submissions": int(m.group(1)),
                "median_us": {k: float(v) for k, v in re.findall(r"([a-z][\w()-]*) " + NUM, m.group(2))}}
    return None


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

#!/usr/bin/env python3
"""s17_json.py - JSON beside session 17's results (bench/results/nvidia-h100/2026-11-26-s17-*).
Latency A/B summaries (s126, s127: lines "  VARIANT latency ROW ... rm:0 MEDIAN BEST P99 UNIT - ok")
become records of kind latency; vs-llamacpp tables go through results_json.records. Run from the
repository root with the call summaries as arguments: s17_json.py RESULT.md SUMMARY.txt... ; with
--table it prints the median table (variant x row) in markdown instead."""
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results_json import records  # noqa: E402

LAT = re.compile(r"^\s+(\S+) latency (\S+) .*? rm:0 ([0-9.]+) ([0-9.]+) ([0-9.]+) (us\S*) - (ok|FAIL)")
ERR = re.compile(r"^\s+(\S+) latency (\S+) .*? rm:0 - - - (us\S*) - (ERROR|FAIL) (.*)$")


def lat_records(text, call):
    out = []
    for line in text.splitlines():
        m = LAT.match(line)
        if m:
            out.append({"kind": "latency", "call": call, "variant": m.group(1), "row": m.group(2),
                        "median": float(m.group(3)), "best": float(m.group(4)), "p99": float(m.group(5)),
                        "unit": m.group(6), "verified": m.group(7) == "ok"})
            continue
        e = ERR.match(line)
        if e:
            out.append({"kind": "latency", "call": call, "variant": e.group(1), "row": e.group(2),
                        "median": None, "unit": e.group(3), "verified": False, "error": e.group(5)[:200]})
    return out


def main():
    args = sys.argv[1:]
    table = args and args[0] == "--table"
    if table:
        args = args[1:]
    md, sums = args[0], args[1:]
    recs = []
    for s in sums:
        recs += lat_records(open(s).read(), os.path.basename(os.path.dirname(s)) or s)
    if table:
        rows = ["launch_sync", "back_to_back", "graph_300", "dep_chain_graph", "dep_chain_stream"]
        print("| call | variant | runs | " + " | ".join(rows) + " |")
        print("|---|---|---:|" + "---:|" * len(rows))
        keys = []
        for r in recs:
            if (r["call"], r["variant"]) not in keys:
                keys.append((r["call"], r["variant"]))
        for call, v in keys:
            cells = []
            for row in rows:
                xs = [r["median"] for r in recs if r["call"] == call and r["variant"] == v and r["row"] == row]
                ok = [x for x in xs if x is not None]
                cells.append("fault/FAIL" if xs and not ok else
                             ("%.4g" % statistics.median(ok)) + ("" if len(ok) == len(xs) else " (some FAIL)")
                             if ok else "")
            n = max(1, len([r for r in recs if r["call"] == call and r["variant"] == v and r["row"] == "launch_sync"]))
            print("| %s | %s | %d | %s |" % (call, v, n, " | ".join(cells)))
        return
    recs += records(open(md).read())
    meta = {"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04", "source": os.path.basename(md),
            "records": recs}
    with open(md[:-3] + ".json", "w") as f:
        json.dump(meta, f, indent=1)
    print("wrote", md[:-3] + ".json", len(recs), "records")


main()

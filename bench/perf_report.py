#!/usr/bin/env python3
"""perf_report.py - docs/performance.md from the current record of results.

Reads bench/results/<gpu>/ (vs-llamacpp*.json: bench/vs-llamacpp.sh and same-call comparisons in its
format; batched-decode.json: `nvhcq llm-bench --batch` beside llama-batched-bench; llm-bench.json: `nvhcq llm-bench`
records with a meta block; serve.json: bench/vs-llama-server.sh; bench*.json: `nvhcq bench
--json`) and writes one markdown page: per GPU, decode/prefill against llama.cpp on the same
files, then every `nvhcq bench` group with the CUDA/cuBLAS anchor measured in the same process.
Each table names the file it came from and that file's date, commit, driver and command.
`make perf-report` runs it; a test checks that the committed page is what it writes.
Standard library only.
"""
import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        if abs(v) >= 100:
            return "%.0f" % v
        if abs(v) >= 10:
            return "%.1f" % v
        return "%.3g" % v
    return str(v)


def meta_line(meta):
    """The stamp line of a record with a meta block (vs-llamacpp.json, llm-bench.json)."""
    return "%s, driver %s, commit %s, %s. Command: `%s`.\n" % (
        meta.get("gpu", "unknown GPU"), meta.get("driver", "unknown"), str(meta.get("commit", "unknown"))[:10],
        meta.get("date", "date unknown"), meta.get("command", "unknown"))


def vs_llamacpp(path, out):
    d = json.load(open(path))
    meta = d.get("meta", {})
    out.append("### Same files as llama.cpp: tokens/s (`%s`)\n" % os.path.relpath(path, ROOT))
    out.append(meta_line(meta))
    rows = {}
    engines = []
    for r in d["results"]:
        key = (r["type"], r["test"])
        rows.setdefault(key, {})[r["engine"]] = r["tok_s"]
        if r["engine"] not in engines:
            engines.append(r["engine"])
    ours = [e for e in engines if e != "llama.cpp"]
    out.append("| file | test | llama.cpp | " + " | ".join("%s | ratio" % e for e in ours) + " |")
    out.append("|---|---|---:|" + "---:|---:|" * len(ours))
    for (ty, test), v in rows.items():
        ref = v.get("llama.cpp")
        cells = []
        for e in ours:
            x = v.get(e)
            cells += [fmt(x), ("%.2fx" % (x / ref)) if x and ref else ""]
        out.append("| %s | %s | %s | %s |" % (ty, test, fmt(ref), " | ".join(cells)))
    out.append("")


def llm_bench(path, out):
    d = json.load(open(path))
    meta = d.get("meta", {})
    out.append("### nvhcq llm-bench (`%s`)\n" % os.path.relpath(path, ROOT))
    out.append(meta_line(meta))
    out.append("| model | type | backend | test | tokens/s | MB/token | GB/s | % of DRAM peak |")
    out.append("|---|---|---|---|---:|---:|---:|---:|")
    for r in d["records"]:
        test = r.get("test", "")
        if r.get("n_depth"):
            test += " @ d%d" % r["n_depth"]
        mb = r.get("bytes_per_token")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r.get("model", ""), r.get("type", ""), r.get("backend", ""), test, fmt(r.get("avg_ts")),
            fmt(mb / 1e6) if mb else "", fmt(r.get("gbps")), fmt(r.get("pct_peak"))))
    out.append("")


def batched(path, out):
    d = json.load(open(path))
    meta = d.get("meta", {})
    out.append("### Batched decode against llama-batched-bench: tokens/s of all sequences (`%s`)\n"
               % os.path.relpath(path, ROOT))
    out.append(meta_line(meta))
    rows = {}
    for r in d["results"]:
        rows.setdefault((r["type"], r["pp"], r["tg"], r["b"]), {})[r["engine"]] = r
    out.append("S_TG: generated tokens/s, S_PP: prompt tokens/s (the B prompts prefilled together).\n")
    out.append("| file | PP | TG | B | llama.cpp S_TG | nvhcq S_TG | ratio | nvhcq step ms p50 / p99 | llama.cpp S_PP "
               "| nvhcq S_PP | ratio |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (ty, pp, tg, b), v in rows.items():
        ref = v.get("llama.cpp", {}).get("s_tg")
        ours = next((x for e, x in v.items() if e != "llama.cpp"), {})
        x = ours.get("s_tg")
        pref, px = v.get("llama.cpp", {}).get("s_pp"), ours.get("s_pp")
        out.append("| %s | %d | %d | %d | %s | %s | %s | %s / %s | %s | %s | %s |" % (
            ty, pp, tg, b, fmt(ref), fmt(x), ("%.2fx" % (x / ref)) if x and ref else "",
            fmt(ours.get("step_ms_p50")), fmt(ours.get("step_ms_p99")), fmt(pref), fmt(px),
            ("%.2fx" % (px / pref)) if px and pref else ""))
    out.append("")


def serve(path, out):
    """serve.json (bench/vs-llama-server.sh): both servers under the same load generator. llama-server
    may appear in several configurations (engine "llama-server" plus its flags); the ratio is
    against the fastest of them at each concurrency."""
    d = json.load(open(path))
    out.append("### nvhcq serve against llama-server, same file and load (`%s`)\n" % os.path.relpath(path, ROOT))
    out.append(meta_line(d.get("meta", {})))
    by = {}
    for r in d["results"]:
        by.setdefault(r["engine"], {})[r["clients"]] = r
    ours = by.get("nvhcq", {})
    refs = sorted(e for e in by if e.startswith("llama-server"))
    ms = lambda v: fmt(v * 1000) if v is not None else ""
    out.append("| clients | nvhcq tok/s | %s | ratio to the fastest | nvhcq TTFT p50 / p99 ms | fastest llama-server TTFT p50 / p99 ms |"
               % " | ".join("`%s` tok/s" % e for e in refs))
    out.append("|---:|---:|%s---:|---:|---:|" % ("---:|" * len(refs)))
    for c in sorted(ours):
        x = ours[c]
        ys = [by[e].get(c, {}) for e in refs]
        best = max(ys, key=lambda y: y.get("agg_tok_s") or 0, default={})
        r = x["agg_tok_s"] / best["agg_tok_s"] if best.get("agg_tok_s") else None
        out.append("| %d | %s | %s | %s | %s / %s | %s / %s |" % (
            c, fmt(x["agg_tok_s"]), " | ".join(fmt(y.get("agg_tok_s")) for y in ys), ("%.2fx" % r) if r else "",
            ms(x.get("ttft_p50_s")), ms(x.get("ttft_p99_s")), ms(best.get("ttft_p50_s")), ms(best.get("ttft_p99_s"))))
    lb = by.get("nvhcq llm-bench", {}).get(1, {})
    for c, x in sorted(by.get("nvhcq --parallel 1", {}).items()):
        out.append("\nOne client on `nvhcq serve --parallel 1`: %s tokens/s decoding per request%s." % (
            fmt(x.get("decode_tok_s_mean")), "; `nvhcq llm-bench` %s in the same call: %s tokens/s (%.2fx)" % (
                lb["test"], fmt(lb["avg_ts"]), x["decode_tok_s_mean"] / lb["avg_ts"]) if lb.get("avg_ts") else ""))
    out.append("")


def bench(path, out):
    d = json.load(open(path))
    devs = d.get("devices", [])
    gpu = devs[0]["name"] if devs else "unknown GPU"
    drv = next((x.get("driver") for x in devs if x.get("backend") == "rm"), devs[0].get("driver") if devs else "unknown")
    groups = []
    for r in d["results"]:
        if r["group"] not in groups:
            groups.append(r["group"])
    out.append("### nvhcq bench %s (`%s`)\n" % (", ".join(groups), os.path.relpath(path, ROOT)))
    out.append("%s, driver %s, commit %s, %s. Command: `%s`.\n" % (
        gpu, drv, str(d.get("commit", "unknown"))[:10], d.get("date", "date unknown")[:10], d.get("command", "unknown")))
    anchors = ("cuda:", "cublas")
    ref = {}
    for r in d["results"]:
        if r["backend"].startswith(anchors):
            ref.setdefault((r["group"], r["name"], r["params"]), r)
    out.append("| group | row | params | backend | unit | median | p99 | anchor median | vs anchor |")
    out.append("|---|---|---|---|---|---:|---:|---:|---:|")
    for r in d["results"]:
        if r["backend"].startswith(anchors):
            continue
        a = ref.get((r["group"], r["name"], r["params"]))
        vs = r.get("vs_cuda")
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["group"], r["name"], r["params"], r["backend"], r["unit"], fmt(r["median"]), fmt(r.get("p99")),
            fmt(a["median"]) + (" (%s)" % a["backend"]) if a else "", ("%.2fx" % vs) if vs else ""))
    out.append("")


def main():
    out = ["# Performance (generated)", "",
           "Generated by `make perf-report` (bench/perf_report.py) from the current record in",
           "`bench/results/<gpu>/`; do not edit by hand. `vs anchor` and `ratio` are speed-ups (above 1:",
           "nvhcq is faster), for rows where lower is better too. How each benchmark measures:",
           "bench/README.md. A GPU's record is replaced as a whole by `bench/gpu-check.sh`.", ""]
    for gdir in sorted(glob.glob(os.path.join(ROOT, "bench/results/*/"))):
        gpu = os.path.basename(os.path.dirname(gdir))
        out.append("## %s\n" % gpu)
        log = os.path.join(gdir, "test-gpu.log")
        if os.path.exists(log):
            lines = open(log).read().splitlines()
            head = [l[2:] for l in lines[:2] if l.startswith("# ")]
            total = next((l for l in reversed(lines) if l.startswith("total:")), "no total line")
            out.append("`make test-gpu` (`%s`): **%s** - %s.\n" % (os.path.relpath(log, ROOT), total, "; ".join(head)))
        for vs in sorted(glob.glob(os.path.join(gdir, "vs-llamacpp*.json"))):
            vs_llamacpp(vs, out)
        bd = os.path.join(gdir, "batched-decode.json")
        if os.path.exists(bd):
            batched(bd, out)
        lb = os.path.join(gdir, "llm-bench.json")
        if os.path.exists(lb):
            llm_bench(lb, out)
        sv = os.path.join(gdir, "serve.json")
        if os.path.exists(sv):
            serve(sv, out)
        for b in sorted(glob.glob(os.path.join(gdir, "bench*.json"))):
            bench(b, out)
    text = "\n".join(out).rstrip() + "\n"
    dst = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs/performance.md")
    with open(dst, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# serve-load.py - load generator for OpenAI-compatible servers (`nvhcq serve`, `llama-server`,
# anything with /v1/completions or /v1/chat/completions and server-sent events). For each
# concurrency level, N clients (threads) each send R streaming requests back to back; it reports
# the aggregate generated tokens/s (all tokens / wall time), the per-request decode tokens/s
# (tokens after the first / time from the first content chunk to the finish chunk: tokens whose
# text is empty, e.g. control tokens, send no content chunk but are counted in the usage) and
# time to first token p50/p99. Python 3.8+,
# standard library only (the GPU machines have python but no node). docs/serve.md, "Measuring".
#
#   python3 bench/serve-load.py --url http://127.0.0.1:8080 --clients 1,8,32,64 --requests 4 \
#        --max-tokens 128 [--temperature T] [--chat] [--api-key KEY] [--ignore-eos] [--json out.json] [--label nvhcq]
import argparse
import datetime
import http.client
import json
import math
import sys
import threading
import time
import urllib.parse


def parse_args():
    ap = argparse.ArgumentParser(prog="serve-load.py", description="load generator for OpenAI-compatible servers")
    ap.add_argument("--url", required=True)
    ap.add_argument("--clients", default="1,8,32,64", help="concurrency levels, comma-separated")
    ap.add_argument("--requests", type=int, default=4, help="requests per client, back to back")
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--temperature", type=float, default=0.0,
                    help="sampling temperature of every request (0: greedy; the server's other defaults)")
    ap.add_argument("--prompt", default="Once upon a time, in a quiet town by the sea,")
    ap.add_argument("--chat", action="store_true", help="/v1/chat/completions with one user message")
    ap.add_argument("--api-key")
    ap.add_argument("--model", default="default")
    ap.add_argument("--ignore-eos", action="store_true", help="every request generates --max-tokens")
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--json", help="write the rows to this file")
    ap.add_argument("--label")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per request")
    o = ap.parse_args()
    try:
        o.clients = [int(x) for x in o.clients.split(",") if int(x) > 0]
    except ValueError:
        ap.error("--clients: numbers separated by commas")
    if not o.clients or o.requests <= 0 or o.max_tokens < 0:
        ap.error("--clients and --requests must be positive")
    u = urllib.parse.urlparse(o.url.rstrip("/"))
    if u.scheme != "http" or not u.hostname:
        ap.error("--url: http://HOST:PORT")
    o.host, o.port, o.base = u.hostname, u.port or 80, u.path
    return o


def one(o):
    """One streaming request: times of the first content chunk and of the finish (the chunk with a
    finish_reason; else the last content chunk), tokens (usage when the server sends it, else the
    content chunks), or an error."""
    body = {"model": o.model, "max_tokens": o.max_tokens, "temperature": o.temperature, "stream": True,
            "stream_options": {"include_usage": True}}
    if o.chat:
        body["messages"] = [{"role": "user", "content": o.prompt}]
    else:
        body["prompt"] = o.prompt
    if o.ignore_eos:
        body["ignore_eos"] = True
    headers = {"Content-Type": "application/json"}
    if o.api_key:
        headers["Authorization"] = "Bearer " + o.api_key
    t0 = time.perf_counter()
    first = last = end = None
    chunks, usage_tokens = 0, None
    c = http.client.HTTPConnection(o.host, o.port, timeout=o.timeout)
    try:
        c.request("POST", o.base + ("/v1/chat/completions" if o.chat else "/v1/completions"), json.dumps(body), headers)
        r = c.getresponse()
        if r.status != 200:
            return {"error": "HTTP %d: %s" % (r.status, r.read()[:200].decode("utf-8", "replace"))}
        while True:
            line = r.readline()
            if not line:
                break
            line = line.decode("utf-8", "replace").rstrip("\r\n")
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            j = json.loads(line[6:])
            if j.get("error"):
                return {"error": json.dumps(j["error"])}
            if j.get("usage") and j["usage"].get("completion_tokens") is not None:
                usage_tokens = j["usage"]["completion_tokens"]
            ch = (j.get("choices") or [None])[0]
            text = None
            if ch:
                text = (ch.get("delta") or {}).get("content") if o.chat else ch.get("text")
            now = time.perf_counter()
            if text:
                first = now if first is None else first
                last = now
                chunks += 1
            if ch and ch.get("finish_reason") and end is None:
                end = now
    except (OSError, http.client.HTTPException, ValueError) as e:
        return {"error": repr(e)}
    finally:
        c.close()
    tokens = usage_tokens if usage_tokens is not None else chunks
    return {"t0": t0, "first": first, "last": end if end is not None else last, "tokens": tokens,
            "ttft": None if first is None else first - t0}


def pct(xs, p):
    if not xs:
        return math.nan
    s = sorted(xs)
    return s[min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1)]


def level(o, n):
    res, lock = [], threading.Lock()

    def client():
        for _ in range(o.requests):
            r = one(o)
            with lock:
                res.append(r)

    t0 = time.perf_counter()
    th = [threading.Thread(target=client) for _ in range(n)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    wall = time.perf_counter() - t0
    okr = [r for r in res if "error" not in r and r["tokens"] > 0]
    tokens = sum(r["tokens"] for r in okr)
    decode = [(r["tokens"] - 1) / (r["last"] - r["first"]) for r in okr if r["tokens"] > 1 and r["last"] > r["first"]]
    ttft = [r["ttft"] for r in okr]
    errors = [r for r in res if "error" in r]
    return {"clients": n, "requests": len(res), "ok": len(okr), "errors": len(errors),
            "first_error": errors[0]["error"] if errors else None, "tokens": tokens, "wall_s": wall,
            "agg_tok_s": tokens / wall, "decode_tok_s_mean": sum(decode) / len(decode) if decode else math.nan,
            "ttft_p50_s": pct(ttft, 50), "ttft_p99_s": pct(ttft, 99)}


def main():
    o = parse_args()
    for _ in range(o.warmup):
        w = one(o)
        if "error" in w:
            print("serve-load.py: warm-up request failed: " + w["error"], file=sys.stderr)
            return 1
    f = lambda x, d: ("%.*f" % (d, x)) if isinstance(x, (int, float)) and math.isfinite(x) else "-"
    print("| server | clients | requests | ok | errors | tokens | wall s | aggregate tok/s | decode tok/s per request "
          "| TTFT p50 ms | TTFT p99 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for n in o.clients:
        r = level(o, n)
        r["label"] = o.label or o.url
        rows.append(r)
        print("| %s | %d | %d | %d | %d | %d | %s | %s | %s | %s | %s |" % (
            r["label"], n, r["requests"], r["ok"], r["errors"], r["tokens"], f(r["wall_s"], 2), f(r["agg_tok_s"], 1),
            f(r["decode_tok_s_mean"], 1), f(r["ttft_p50_s"] * 1000, 1), f(r["ttft_p99_s"] * 1000, 1)), flush=True)
        if r["first_error"]:
            print("  first error: " + r["first_error"], file=sys.stderr)
    if o.json:
        clean = [{k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in r.items()} for r in rows]
        with open(o.json, "w") as fp:
            json.dump({"url": o.url, "label": o.label, "max_tokens": o.max_tokens, "requests_per_client": o.requests,
                       "chat": o.chat, "ignore_eos": o.ignore_eos, "prompt": o.prompt,
                       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "rows": clean}, fp, indent=1)
            fp.write("\n")
    return 1 if any(r["errors"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env node
// SPDX-License-Identifier: MIT
// serve-load.js - load generator for OpenAI-compatible servers (`nvhcq serve`, `llama-server`,
// anything with /v1/completions or /v1/chat/completions and server-sent events). For each
// concurrency level, N clients each send R streaming requests back to back; it reports the
// aggregate generated tokens/s (all tokens / wall time), the per-request decode tokens/s
// (tokens after the first / time after the first), and time to first token p50/p99.
// Node 18+ (built-in fetch), no packages. docs/serve.md, "Measuring".
//
//   node bench/serve-load.js --url http://127.0.0.1:8080 --clients 1,8,32,64 --requests 4 \
//        --max-tokens 128 [--chat] [--api-key KEY] [--ignore-eos] [--json out.json] [--label nvhcq]
'use strict';
const fs = require('fs');

function usage(msg) {
    if (msg) console.error('serve-load.js: ' + msg);
    console.error('usage: node bench/serve-load.js --url URL [--clients 1,8,32,64] [--requests R] [--max-tokens N]\n' +
        '       [--prompt TEXT] [--chat] [--api-key KEY] [--model NAME] [--ignore-eos] [--warmup 1]\n' +
        '       [--json FILE] [--label NAME] [--timeout S]');
    process.exit(2);
}
const o = { url: null, clients: [1, 8, 32, 64], requests: 4, maxTokens: 128, prompt: 'Once upon a time, in a quiet town by the sea,',
    chat: false, key: null, model: 'default', ignoreEos: false, warmup: 1, json: null, label: null, timeout: 600 };
const av = process.argv.slice(2);
for (let i = 0; i < av.length; i++) {
    const a = av[i], v = () => (i + 1 < av.length ? av[++i] : usage(a + ' needs a value'));
    const num = (s) => { const n = Number(s); if (!Number.isFinite(n) || n < 0) usage(`${a}: '${s}' is not a number`); return n; };
    if (a === '--url') o.url = v().replace(/\/$/, '');
    else if (a === '--clients') o.clients = v().split(',').map(num).filter((n) => n > 0);
    else if (a === '--requests') o.requests = num(v());
    else if (a === '--max-tokens') o.maxTokens = num(v());
    else if (a === '--prompt') o.prompt = v();
    else if (a === '--chat') o.chat = true;
    else if (a === '--api-key') o.key = v();
    else if (a === '--model') o.model = v();
    else if (a === '--ignore-eos') o.ignoreEos = true;
    else if (a === '--warmup') o.warmup = num(v());
    else if (a === '--json') o.json = v();
    else if (a === '--label') o.label = v();
    else if (a === '--timeout') o.timeout = num(v());
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown option '${a}'`);
}
if (!o.url) usage('--url is required');
if (!o.clients.length || !o.requests) usage('--clients and --requests must be positive');

const headers = { 'Content-Type': 'application/json' };
if (o.key) headers.Authorization = 'Bearer ' + o.key;

// One streaming request: times of the first and last content chunk, tokens (usage when the
// server sends it, else the content chunks), or an error.
async function one() {
    const body = { model: o.model, max_tokens: o.maxTokens, temperature: 0, stream: true,
        stream_options: { include_usage: true } };
    if (o.chat) body.messages = [{ role: 'user', content: o.prompt }];
    else body.prompt = o.prompt;
    if (o.ignoreEos) body.ignore_eos = true;
    const t0 = performance.now();
    let first = null, last = null, chunks = 0, usageTokens = null;
    const r = await fetch(o.url + (o.chat ? '/v1/chat/completions' : '/v1/completions'), {
        method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(o.timeout * 1000) });
    if (r.status !== 200) return { error: `HTTP ${r.status}: ${(await r.text()).slice(0, 200)}` };
    const dec = new TextDecoder();
    let buf = '';
    for await (const part of r.body) {
        buf += dec.decode(part, { stream: true });
        let k;
        while ((k = buf.indexOf('\n\n')) >= 0) {
            const ev = buf.slice(0, k);
            buf = buf.slice(k + 2);
            for (const line of ev.split('\n')) {
                if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
                const j = JSON.parse(line.slice(6));
                if (j.error) return { error: JSON.stringify(j.error) };
                if (j.usage && j.usage.completion_tokens != null) usageTokens = j.usage.completion_tokens;
                const c = j.choices && j.choices[0];
                const text = c ? (o.chat ? c.delta && c.delta.content : c.text) : null;
                if (text) {
                    const now = performance.now();
                    if (first === null) first = now;
                    last = now;
                    chunks++;
                }
            }
        }
    }
    const tokens = usageTokens !== null ? usageTokens : chunks;
    return { t0, first, last, tokens, ttft: first === null ? null : (first - t0) / 1000 };
}

function pct(xs, p) {
    if (!xs.length) return NaN;
    const s = [...xs].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

async function level(n) {
    const res = [];
    const t0 = performance.now();
    await Promise.all(Array.from({ length: n }, async () => {
        for (let i = 0; i < o.requests; i++) {
            try { res.push(await one()); } catch (e) { res.push({ error: String(e) }); }
        }
    }));
    const wall = (performance.now() - t0) / 1000;
    const okr = res.filter((r) => !r.error && r.tokens > 0);
    const tokens = okr.reduce((s, r) => s + r.tokens, 0);
    const decode = okr.filter((r) => r.tokens > 1 && r.last > r.first).map((r) => (r.tokens - 1) / ((r.last - r.first) / 1000));
    const ttft = okr.map((r) => r.ttft);
    const errors = res.filter((r) => r.error);
    return { clients: n, requests: res.length, ok: okr.length, errors: errors.length, first_error: errors.length ? errors[0].error : null,
        tokens, wall_s: wall, agg_tok_s: tokens / wall, decode_tok_s_mean: decode.length ? decode.reduce((a, b) => a + b, 0) / decode.length : NaN,
        ttft_p50_s: pct(ttft, 50), ttft_p99_s: pct(ttft, 99) };
}

(async () => {
    for (let i = 0; i < o.warmup; i++) {
        const w = await one().catch((e) => ({ error: String(e) }));
        if (w.error) { console.error('serve-load.js: warm-up request failed: ' + w.error); process.exit(1); }
    }
    const rows = [];
    const f = (x, d) => (Number.isFinite(x) ? x.toFixed(d) : '-');
    console.log(`| server | clients | requests | ok | errors | tokens | wall s | aggregate tok/s | decode tok/s per request | TTFT p50 ms | TTFT p99 ms |`);
    console.log(`|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`);
    for (const n of o.clients) {
        const r = await level(n);
        r.label = o.label || o.url;
        rows.push(r);
        console.log(`| ${r.label} | ${n} | ${r.requests} | ${r.ok} | ${r.errors} | ${r.tokens} | ${f(r.wall_s, 2)} | ${f(r.agg_tok_s, 1)} | ` +
            `${f(r.decode_tok_s_mean, 1)} | ${f(r.ttft_p50_s * 1000, 1)} | ${f(r.ttft_p99_s * 1000, 1)} |`);
        if (r.first_error) console.error(`  first error: ${r.first_error}`);
    }
    if (o.json) fs.writeFileSync(o.json, JSON.stringify({ url: o.url, label: o.label, max_tokens: o.maxTokens, requests_per_client: o.requests,
        chat: o.chat, ignore_eos: o.ignoreEos, prompt: o.prompt, date: new Date().toISOString(), rows }, null, 1) + '\n');
    process.exit(rows.some((r) => r.errors) ? 1 : 0);
})();

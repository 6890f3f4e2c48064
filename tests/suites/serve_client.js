// SPDX-License-Identifier: MIT
// serve_client.js - drives a running `nvhcq serve` (tests/suites/serve.sh starts it) with the
// official `openai` npm client and with plain fetch/sockets for what a client library does not
// send. Prints "  ok   NAME" / "  FAIL NAME: why" per check and "serve_client: N passed, N failed".
// usage: node serve_client.js OPENAI_MODULE_DIR BASE_URL API_KEY EXPECT_DIR
//   EXPECT_DIR holds `nvhcq run --temp 0` outputs: compl.txt (prompt.txt, -n 24),
//   chat.txt (--chat, chat_prompt.txt, -n 24)
'use strict';
const fs = require('fs');
const net = require('net');
const path = require('path');
const [modDir, base, key, expDir] = process.argv.slice(2);
const OpenAI = require(path.join(modDir, 'node_modules', 'openai')).OpenAI;
const client = new OpenAI({ baseURL: base + '/v1', apiKey: key, maxRetries: 0, timeout: 120000 });
const url = new URL(base);
let passed = 0, failed = 0;
function ok(name) { passed++; console.log('  ok   ' + name); }
function bad(name, why) { failed++; console.log('  FAIL ' + name + ': ' + why); }
function check(name, cond, why) { cond ? ok(name) : bad(name, why); }
// `nvhcq run` prints the text and one newline
const read = (f) => fs.readFileSync(path.join(expDir, f), 'utf8').replace(/\n$/, '');
const prompt = read('prompt.txt'), chatPrompt = read('chat_prompt.txt');
const wantCompl = read('compl.txt'), wantChat = read('chat.txt');
const auth = { Authorization: 'Bearer ' + key, 'Content-Type': 'application/json' };

async function post(route, body, headers = auth) {
    const r = await fetch(base + route, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const text = await r.text();
    let json = null;
    try { json = JSON.parse(text); } catch (e) { /* not JSON: json stays null */ }
    return { status: r.status, json, text };
}
// An OpenAI error body with a non-empty message, a type and a code.
function isErr(res, status) {
    const e = res.json && res.json.error;
    return res.status === status && e && typeof e.message === 'string' && e.message.length > 0 &&
        typeof e.type === 'string' && typeof e.code === 'string';
}
async function metric(name) {
    const r = await fetch(base + '/metrics', { headers: auth });
    const m = (await r.text()).match(new RegExp('^' + name + ' ([0-9.]+)$', 'm'));
    return m ? Number(m[1]) : NaN;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
    // ---- the openai client: models, completions, chat, streaming ----
    const models = await client.models.list();
    check('models.list', models.data.length === 1 && typeof models.data[0].id === 'string', JSON.stringify(models.data));
    const c = await client.completions.create({ model: 'm', prompt, max_tokens: 24, temperature: 0 });
    check('completions temp 0 = nvhcq run', c.choices[0].text === wantCompl, JSON.stringify([c.choices[0].text, wantCompl]));
    check('completions usage and finish_reason', c.usage.completion_tokens === 24 && c.usage.prompt_tokens > 0 &&
        c.usage.total_tokens === c.usage.prompt_tokens + 24 && c.choices[0].finish_reason === 'length', JSON.stringify(c));
    const ch = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: chatPrompt }], max_tokens: 24, temperature: 0 });
    check('chat temp 0 = nvhcq run --chat', ch.choices[0].message.content === wantChat && ch.choices[0].message.role === 'assistant',
        JSON.stringify([ch.choices[0].message.content, wantChat]));
    check('chat object and usage', ch.object === 'chat.completion' && ch.usage.completion_tokens <= 24 &&
        ['stop', 'length'].includes(ch.choices[0].finish_reason), JSON.stringify(ch));
    const st = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: chatPrompt }], max_tokens: 24,
        temperature: 0, stream: true, stream_options: { include_usage: true } });
    let text = '', finish = null, usage = null, chunks = 0, role = null;
    for await (const k of st) {
        chunks++;
        if (k.usage) usage = k.usage;
        if (k.choices.length) {
            text += k.choices[0].delta.content || '';
            role = role || k.choices[0].delta.role;
            finish = k.choices[0].finish_reason || finish;
        }
    }
    check('chat stream = whole answer', text === wantChat && chunks > 3 && role === 'assistant', JSON.stringify([text, chunks, role]));
    check('chat stream finish_reason and include_usage', finish === ch.choices[0].finish_reason && usage &&
        usage.completion_tokens === ch.usage.completion_tokens, JSON.stringify([finish, usage]));
    const cs = await client.completions.create({ model: 'm', prompt, max_tokens: 24, temperature: 0, stream: true });
    text = '';
    for await (const k of cs) text += k.choices.length ? k.choices[0].text : '';
    check('completions stream = nvhcq run', text === wantCompl, JSON.stringify(text));
    // a stop string spanning tokens: 7 characters from the middle of the known answer
    const at = Math.floor(wantCompl.length / 2), stop = wantCompl.slice(at, at + 7);
    const cut = wantCompl.indexOf(stop);
    const sc = await client.completions.create({ model: 'm', prompt, max_tokens: 24, temperature: 0, stop: [stop, '\u0001never'] });
    check('stop string: text before it, finish stop', sc.choices[0].text === wantCompl.slice(0, cut) &&
        sc.choices[0].finish_reason === 'stop', JSON.stringify([sc.choices[0].text, stop]));
    const ss = await client.completions.create({ model: 'm', prompt, max_tokens: 24, temperature: 0, stop, stream: true });
    text = '';
    for await (const k of ss) text += k.choices.length ? k.choices[0].text : '';
    check('stop string in a stream', text === wantCompl.slice(0, cut), JSON.stringify(text));
    // sampling fields are accepted and seeded sampling repeats
    const samp = { model: 'm', prompt, max_tokens: 16, temperature: 0.9, top_p: 0.9, top_k: 20, min_p: 0.02, seed: 7,
        presence_penalty: 0.5, frequency_penalty: 0.3 };
    const s1 = await client.completions.create(samp), s2 = await client.completions.create(samp);
    check('seeded sampling repeats', s1.choices[0].text === s2.choices[0].text && s1.choices[0].text.length > 0, JSON.stringify([s1.choices[0].text, s2.choices[0].text]));

    // ---- bad requests: each a 4xx with an OpenAI error body, the server still serving ----
    const C = '/v1/completions', H = '/v1/chat/completions';
    check('malformed JSON: 400', isErr(await post(C, '{"prompt": "a", '), 400), '');
    check('body not an object: 400', isErr(await post(C, '[1,2]'), 400), '');
    check('prompt a number: 400', isErr(await post(C, { prompt: 5 }), 400), '');
    check('missing prompt: 400', isErr(await post(C, { max_tokens: 3 }), 400), '');
    check('messages a string: 400', isErr(await post(H, { messages: 'hi' }), 400), '');
    check('message without role: 400', isErr(await post(H, { messages: [{ content: 'hi' }] }), 400), '');
    check('unknown role: 400', isErr(await post(H, { messages: [{ role: 'wizard', content: 'hi' }] }), 400), '');
    check('temperature a string: 400', isErr(await post(C, { prompt, temperature: 'hot' }), 400), '');
    check('temperature 5: 400', isErr(await post(C, { prompt, temperature: 5 }), 400), '');
    check('stream a string: 400', isErr(await post(C, { prompt, stream: 'yes' }), 400), '');
    check('stop a number: 400', isErr(await post(C, { prompt, stop: 3 }), 400), '');
    check('five stop strings: 400', isErr(await post(C, { prompt, stop: ['a', 'b', 'c', 'd', 'e'] }), 400), '');
    check('empty stop string: 400', isErr(await post(C, { prompt, stop: [''] }), 400), '');
    check('n 2: 400', isErr(await post(C, { prompt, n: 2 }), 400), '');
    const neg = await post(C, { prompt, max_tokens: -5 });
    check('negative max_tokens: 400 naming it', isErr(neg, 400) && neg.json.error.param === 'max_tokens', neg.text);
    check('max_tokens 1e15: 400', isErr(await post(C, { prompt, max_tokens: 1e15 }), 400), '');
    check('max_tokens 2.5: 400', isErr(await post(C, { prompt, max_tokens: 2.5 }), 400), '');
    const big = await post(C, { prompt, max_tokens: 1000000, temperature: 0 });
    const bu = big.json && big.json.usage, bf = big.json && big.json.choices[0].finish_reason;
    check('max_tokens past the context: ends at the context (length) or the story end (stop)', big.status === 200 &&
        ((bf === 'length' && bu.total_tokens === 512) || (bf === 'stop' && bu.total_tokens < 512)), big.text.slice(0, 300));
    const ie = await post(C, { prompt, max_tokens: 1000000, temperature: 0, ignore_eos: true });
    check('ignore_eos: runs to the end of the context', ie.status === 200 && ie.json.choices[0].finish_reason === 'length' &&
        ie.json.usage.total_tokens === 512, ie.text.slice(0, 300));
    // a prompt that leaves 3 tokens of context: length after exactly 3 (' a' is one token each)
    const pt0 = c.usage.prompt_tokens;
    const probe = await post(C, { prompt: prompt + ' a'.repeat(100), max_tokens: 1, temperature: 0 });
    const fill = prompt + ' a'.repeat(509 - pt0);
    const fr = await post(C, { prompt: fill, max_tokens: 50, temperature: 0 });
    check('context full: finish length after the 3 tokens left', probe.json.usage.prompt_tokens === pt0 + 100 &&
        fr.status === 200 && fr.json.usage.prompt_tokens === 509 && fr.json.choices[0].finish_reason === 'length' &&
        fr.json.usage.completion_tokens === 3, fr.text.slice(0, 300));
    const long = await post(C, { prompt: 'Once upon a time '.repeat(400), max_tokens: 4 });
    check('prompt longer than the context: 400 context_length_exceeded', isErr(long, 400) &&
        long.json.error.code === 'context_length_exceeded', long.text);
    // a prompt far past the context is refused on its length, before the tokenizer sees it
    const tl = Date.now();
    const huge = await post(C, { prompt: 'Once upon a time there was a cat. '.repeat(27000), max_tokens: 4 });
    check('900 KB prompt: 400 at once', isErr(huge, 400) && huge.json.error.code === 'context_length_exceeded' &&
        Date.now() - tl < 3000, `${huge.text.slice(0, 200)} ${Date.now() - tl} ms`);
    check('NUL in a string: 400', isErr(await post(C, '{"prompt": "a\\u0000b"}'), 400), '');
    check('unknown route: 404 JSON', isErr(await post('/v1/engines', {}), 404), '');
    const g404 = await fetch(base + '/nope', { headers: auth });
    check('GET unknown route: 404', g404.status === 404 && (await g404.json()).error.code === 'not_found', '');
    const g405 = await fetch(base + C, { headers: auth });
    check('GET on a POST route: 405', g405.status === 405, String(g405.status));
    const tenMB = JSON.stringify({ prompt: 'x'.repeat(10 << 20) });
    check('10 MB body: 413', isErr(await post(C, tenMB), 413), '');
    check('no API key: 401', isErr(await post(C, { prompt }, { 'Content-Type': 'application/json' }), 401), '');
    check('wrong API key: 401', isErr(await post(C, { prompt }, { Authorization: 'Bearer nope', 'Content-Type': 'application/json' }), 401), '');
    const h = await fetch(base + '/health');
    check('/health needs no key', h.status === 200 && (await h.json()).status === 'ok', '');
    const okAfter = await post(C, { prompt, max_tokens: 24, temperature: 0 });
    check('still serving after the bad requests', okAfter.status === 200 && okAfter.json.choices[0].text === wantCompl, okAfter.text);

    // ---- clients that go away ----
    const cancelled0 = await metric('nvhcq_requests_cancelled_total');
    const ac = new AbortController();
    const sr = await fetch(base + C, { method: 'POST', headers: auth, signal: ac.signal,
        body: JSON.stringify({ prompt, temperature: 0, stream: true }) });
    const rd = sr.body.getReader();
    await rd.read();
    ac.abort();
    // a raw socket that sends a long request and closes before the answer
    await new Promise((res) => {
        const s = net.connect(Number(url.port), url.hostname, () => {
            const b = JSON.stringify({ prompt, temperature: 0 });
            s.write(`POST ${C} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\n\r\n${b}`);
            setTimeout(() => { s.destroy(); res(); }, 30);
        });
        s.on('error', res);
    });
    let cancelled = cancelled0;
    for (let i = 0; i < 100 && cancelled < cancelled0 + 2; i++) {
        await sleep(100);
        cancelled = await metric('nvhcq_requests_cancelled_total');
    }
    check('disconnects cancel their generations', cancelled === cancelled0 + 2, `${cancelled0} -> ${cancelled}`);
    const next = await post(C, { prompt, max_tokens: 24, temperature: 0 });
    check('the slot serves the next request', next.status === 200 && next.json.choices[0].text === wantCompl, next.text);

    // ---- more clients than slot + queue: each answered or refused with 429, nothing lost ----
    const burst = await Promise.all(Array.from({ length: 24 }, () => post(C, { prompt, max_tokens: 8, temperature: 0 })));
    const served = burst.filter((r) => r.status === 200), refused = burst.filter((r) => isErr(r, 429));
    check('burst of 24: every request served or 429', served.length + refused.length === 24 && refused.length > 0 && served.length >= 5,
        `served ${served.length}, 429 ${refused.length}, other ${burst.filter((r) => r.status !== 200 && r.status !== 429).map((r) => r.status)}`);
    const want8 = served.length ? served[0].json.choices[0].text : '';
    check('burst answers complete and equal', served.every((r) => r.json.choices[0].text === want8 && r.json.usage.completion_tokens === 8), '');

    // ---- bounded load: 16 clients x 4 requests, streaming and not ----
    const t0 = Date.now();
    let lost = 0, done = 0, busy = 0;
    await Promise.all(Array.from({ length: 16 }, async (_, ci) => {
        for (let j = 0; j < 4; j++) {
            try {
                if ((ci + j) % 2) {
                    const s = await client.completions.create({ model: 'm', prompt, max_tokens: 12, temperature: 0, stream: true });
                    let t = '';
                    for await (const k of s) t += k.choices.length ? k.choices[0].text : '';
                    t.length > 0 ? done++ : lost++;
                } else {
                    const r = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: chatPrompt }], max_tokens: 12 });
                    r.choices[0].finish_reason ? done++ : lost++;
                }
            } catch (e) {
                if (e.status === 429 && e.error && e.error.message) busy++;
                else { lost++; console.log('    load: ' + e); }
            }
        }
    }));
    check('load 16 x 4: every request answered or refused clearly', lost === 0 && done + busy === 64 && done > 0,
        `done ${done}, 429 ${busy}, lost ${lost}, ${Date.now() - t0} ms`);
    const m = await fetch(base + '/metrics', { headers: auth }).then((r) => r.text());
    check('/metrics counts tokens, queue and codes', /^nvhcq_completion_tokens_total [1-9]/m.test(m) &&
        /^nvhcq_queue_depth 0$/m.test(m) && /^nvhcq_http_requests_total\{code="429"\} [1-9]/m.test(m) &&
        /^nvhcq_decode_tokens_per_second [0-9.]+$/m.test(m), m);
}

main().catch((e) => bad('client', e.stack || String(e))).finally(() => {
    console.log(`serve_client: ${passed} passed, ${failed} failed`);
    process.exit(failed ? 1 : 0);
});

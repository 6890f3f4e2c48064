#!/usr/bin/env python3
# gen_expected.py - writes expected/<template>.<conversation>.txt: each template of this folder
# rendered with jinja2 the way HF transformers renders chat templates (trim_blocks,
# lstrip_blocks, raise_exception, strftime_now at a fixed time, tojson without HTML escaping),
# or expected/<template>.<conversation>.err with the message when the template raises.
# The conversations must equal those of tests/unit/test_llm_chat.c (CONVS there).
import json, os, sys, time
import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

NOW = 1700000000  # 2023-11-14 22:13:20 UTC, as the C test passes now_s

CONVS = {
    "sys3": ([("system", "You are a helpful assistant."), ("user", "Hello!"),
              ("assistant", "Hi there. How can I help?"), ("user", "Tell me a joke.")], True, None),
    "nosys": ([("user", "What is 2+2?"), ("assistant", "   It is 4.   "), ("user", "Gr\u00fc\u00dfe \U0001F30D and \"quotes\"")], False, None),
    "one": ([("user", "Hi")], True, None),
    "think": ([("user", "Q1"), ("assistant", "<think>\nstep one\n</think>\n\nA1"), ("user", "Q2")], True, False),
}

def render(src, msgs, add_gen, thinking):
    def raise_exception(m):
        raise jinja2.exceptions.TemplateError(m)
    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
    def strftime_now(fmt):
        return time.strftime(fmt, time.gmtime(NOW))
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    kw = dict(messages=[{"role": r, "content": c} for r, c in msgs], add_generation_prompt=add_gen,
              bos_token="<BOS>", eos_token="<EOS>")
    if thinking is not None:
        kw["enable_thinking"] = thinking
    return env.from_string(src).render(**kw)

here = os.path.dirname(os.path.abspath(__file__))
os.makedirs(os.path.join(here, "expected"), exist_ok=True)
for f in sorted(os.listdir(here)):
    if not f.endswith(".jinja"):
        continue
    src = open(os.path.join(here, f), encoding="utf-8").read()
    for name, (msgs, add_gen, thinking) in CONVS.items():
        base = os.path.join(here, "expected", f[:-6] + "." + name)
        for ext in (".txt", ".err"):
            if os.path.exists(base + ext):
                os.remove(base + ext)
        try:
            out, ext = render(src, msgs, add_gen, thinking), ".txt"
        except jinja2.exceptions.TemplateError as e:
            out, ext = str(e), ".err"
        with open(base + ext, "w", encoding="utf-8", newline="") as fh:
            fh.write(out)

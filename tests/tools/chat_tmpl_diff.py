#!/usr/bin/env python3
# chat_tmpl_diff.py - differential test of the chat-template renderer against Python's jinja2
# set up as HF transformers sets it up (trim_blocks, lstrip_blocks, raise_exception,
# strftime_now, tojson without HTML escaping). Two modes:
#   convs  N SEED: random conversations (roles in and out of order, <think>, quotes, braces,
#                  UTF-8) through every template of tests/data/chat_templates/
#   tmpls  N SEED: random templates built from the supported constructs, on a fixed conversation
# Each case must render the same text in both or fail in both; prints the first differences and
# "same N both-error N different N". Needs python3 with jinja2 and a C compiler; not part of
# `make test`. Usage: BUILD=build-nc python3 tests/tools/chat_tmpl_diff.py convs 1500 1
import json, os, random, subprocess, sys, tempfile, time
import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(ROOT, "tests", "data", "chat_templates")
NOW = 1700000000

DRIVER = r'''
#include "llm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* driver TEMPLATE MSGS ADD_GEN THINKING: MSGS holds role\0content\0 pairs */
int main(int argc, char **argv) {
    static char src[1 << 20], mb[1 << 20];
    struct llm_chat_msg m[64];
    size_t n, mn, k = 0;
    struct llm_chat_tmpl_obj *t;
    char *out;
    FILE *f;
    if (argc != 5) return 2;
    hcq_log_errors_owned_by_caller(true);
    if (!(f = fopen(argv[1], "rb"))) return 2;
    n = fread(src, 1, sizeof src - 1, f); src[n] = 0; fclose(f);
    if (!(f = fopen(argv[2], "rb"))) return 2;
    mn = fread(mb, 1, sizeof mb, f); fclose(f);
    for (size_t i = 0; i < mn && k < 64; k++) {
        m[k].role = mb + i; i += strlen(mb + i) + 1;
        m[k].content = mb + i; i += strlen(mb + i) + 1;
    }
    if (llm_chat_tmpl_create(src, "<s>", "</s>", &t)) { printf("ERROR %s", hcq_last_error()); return 0; }
    struct llm_chat_apply_params p = {atoi(argv[3]), atoi(argv[4]), NOW_S};
    if (llm_chat_tmpl_apply_ex(t, m, k, &p, &out, NULL)) printf("ERROR %s", hcq_last_error());
    else { fputs(out, stdout); free(out); }
    llm_chat_tmpl_destroy(t);
    return 0;
}
'''.replace("NOW_S", str(NOW))


def jinja_env():
    def raise_exception(msg):
        raise jinja2.exceptions.TemplateError(msg)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=["jinja2.ext.loopcontrols"])
    env.filters["tojson"] = lambda x, indent=None, ensure_ascii=False, separators=None, sort_keys=False: \
        json.dumps(x, ensure_ascii=False, indent=indent)
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: time.strftime(fmt, time.gmtime(NOW))
    return env


class Diff:
    def __init__(self, tmp):
        build = os.environ.get("BUILD", "build")
        self.drv = os.path.join(tmp, "driver")
        with open(self.drv + ".c", "w") as f:
            f.write(DRIVER)
        subprocess.run([os.environ.get("CC", "cc"), "-std=c11", "-D_GNU_SOURCE", "-I", os.path.join(ROOT, "include"),
                        self.drv + ".c", os.path.join(ROOT, build, "libnvhcq.a"), "-ldl", "-lm", "-pthread",
                        "-o", self.drv], check=True)
        self.tmp, self.env = tmp, jinja_env()
        self.same = self.errors = self.different = 0

    def case(self, src, msgs, add_gen, thinking, label):
        kw = dict(messages=msgs, add_generation_prompt=add_gen, bos_token="<s>", eos_token="</s>")
        if thinking >= 0:
            kw["enable_thinking"] = bool(thinking)
        try:
            want, werr = self.env.from_string(src).render(**kw), None
        except Exception as e:  # any jinja2 failure counts as an error
            want, werr = None, "%s: %s" % (type(e).__name__, e)
        tp, mp = os.path.join(self.tmp, "t.jinja"), os.path.join(self.tmp, "m.bin")
        with open(tp, "w", encoding="utf-8") as f:
            f.write(src)
        with open(mp, "wb") as f:
            for m in msgs:
                f.write(m["role"].encode() + b"\0" + m["content"].encode() + b"\0")
        got = subprocess.run([self.drv, tp, mp, str(int(add_gen)), str(thinking)],
                             capture_output=True).stdout.decode("utf-8", "replace")
        gerr = got.startswith("ERROR ")
        if werr and gerr:
            self.errors += 1
        elif not werr and not gerr and got == want:
            self.same += 1
        else:
            self.different += 1
            if self.different <= 5:
                print("=== %s\n%s\n--- jinja2: %r\n--- nvhcq:  %r" % (label, src if len(src) < 2000 else "",
                                                                  want if werr is None else werr, got))


PIECES = ["hi", " ", "\n", "<think>", "</think>", "<tool_response>", "</tool_response>", "{{", "%}", "'", '"',
          "\u00e9", "\U0001F30D", "\\", "x y z", "  ", "[INST]", "\t"]


def convs(d, n, rng):
    tmpls = {f: open(os.path.join(DATA, f), encoding="utf-8").read()
             for f in sorted(os.listdir(DATA)) if f.endswith(".jinja")}
    for _ in range(n):
        name = rng.choice(sorted(tmpls))
        roles = ["system"] if rng.random() < 0.5 else []
        for k in range(rng.randrange(0, 6)):
            in_order = "user" if k % 2 == 0 else "assistant"
            roles.append(rng.choice(["user", "assistant"]) if rng.random() < 0.2 else in_order)
        if rng.random() < 0.1:
            roles.append(rng.choice(["tool", "system", "ipython"]))
        msgs = [{"role": r, "content": "".join(rng.choice(PIECES) for _ in range(rng.randrange(6)))} for r in roles]
        d.case(tmpls[name], msgs, rng.random() < 0.6, rng.choice([-1, 0, 1]), name + " " + " ".join(roles))


def tmpls(d, n, rng):
    def atom(depth):
        return rng.choice([
            lambda: repr(rng.choice(["a", "b c", " x ", "", "it's"])), lambda: str(rng.randrange(-3, 9)),
            lambda: rng.choice(["true", "false", "none"]), lambda: "messages",
            lambda: "messages[%d]" % rng.randrange(-2, 4), lambda: "messages[%d].content" % rng.randrange(4),
            lambda: "messages[%d]['role']" % rng.randrange(4), lambda: "bos_token", lambda: "undefined_x",
            lambda: "[" + ", ".join(expr(depth + 1) for _ in range(rng.randrange(3))) + "]",
            lambda: "add_generation_prompt", lambda: "(" + expr(depth + 1) + ")", lambda: "ns.v", lambda: "v1"])()

    def expr(depth=0):
        if depth > 3:
            return atom(depth)
        return rng.choice([
            lambda: atom(depth),
            lambda: expr(depth + 1) + " " + rng.choice(["+", "~", "==", "!=", "and", "or", "in", "not in", "<", ">=",
                                                        "*", "-", "//"]) + " " + expr(depth + 1),
            lambda: atom(depth) + " | " + rng.choice(["trim", "length", "upper", "lower", "string", "first", "last",
                                                      "tojson", "capitalize", "title", "list", "reverse|list",
                                                      "default('D')", "replace('a','Z')", "join('-')", "int"]),
            lambda: atom(depth) + " is " + rng.choice(["defined", "none", "string", "mapping", "iterable", "number",
                                                       "not none", "equalto 'a'", "sequence"]),
            lambda: atom(depth) + rng.choice([".strip()", ".upper()", ".split()", ".startswith('a')", ".lstrip()",
                                              ".endswith('e')", ".rstrip('\\n')", ".split(' ')"]),
            lambda: "not " + expr(depth + 1),
            lambda: expr(depth + 1) + " if " + expr(depth + 1) + " else " + expr(depth + 1),
            lambda: atom(depth) + "[" + rng.choice(["1:", ":-1", "::-1", "0", "-1", "1:3"]) + "]"])()

    def ws():
        return rng.choice(["", " ", "\n", "  ", "\n  ", " \n", "\t"])

    def dash():
        return rng.choice(["", "", "-"])

    def stmt(depth):
        kinds = [lambda: rng.choice(["x", "Hello", "[", "]", " ", "\n", "  \n", "a\n  b", "{", "}"]),
                 lambda: ws() + "{{" + dash() + " " + expr() + " " + dash() + "}}" + ws(),
                 lambda: ws() + "{#" + dash() + " c " + dash() + "#}" + ws(),
                 lambda: ws() + "{%" + dash() + " set v1 = " + expr() + " " + dash() + "%}" + ws()]
        if depth < 3:
            kinds += [
                lambda: ws() + "{%" + dash() + " if " + expr() + " " + dash() + "%}" + body(depth + 1) + "{%" +
                dash() + " elif " + expr() + " %}" + body(depth + 1) + "{% else " + dash() + "%}" + body(depth + 1) +
                "{%" + dash() + " endif %}" + ws(),
                lambda: ws() + "{%" + dash() + " for v1 in " + rng.choice(
                    ["messages", "messages[1:]", "[1,2,3]", "'ab'", "range(3)", "messages if v1.role == 'user'"]) +
                " %}" + body(depth + 1) + "{{ loop.index }}{{ loop.first }}{{ loop.last }}{%" + dash() + " endfor " +
                dash() + "%}" + ws(),
                lambda: ws() + "{% set ns.v = " + expr() + " %}" + ws(),
                lambda: "\n    {% if " + expr() + " %}\n    " + body(depth + 1) + "\n    {% endif %}\n",
                lambda: ws() + "{% for k, v in {'a': 1, 'b': " + expr() + "}.items() %}{{ k }}={{ v }};{% endfor %}"]
        return rng.choice(kinds)()

    def body(depth):
        return "".join(stmt(depth) for _ in range(rng.randrange(1, 4)))

    msgs = [{"role": "system", "content": "Sys  msg"}, {"role": "user", "content": " Hi there "},
            {"role": "assistant", "content": "Yo\n"}, {"role": "user", "content": "Bye"}]
    for i in range(n):
        d.case("{% set ns = namespace(v=1) %}" + body(0), msgs, True, -1, "template %d" % i)


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("convs", "tmpls"):
        print(__doc__ or "usage: chat_tmpl_diff.py convs|tmpls N SEED")
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        d = Diff(tmp)
        (convs if sys.argv[1] == "convs" else tmpls)(d, int(sys.argv[2]), random.Random(int(sys.argv[3])))
        print("same %d both-error %d different %d" % (d.same, d.errors, d.different))
        return 1 if sys.argv[1] == "convs" and d.different else 0


if __name__ == "__main__":
    sys.exit(main())

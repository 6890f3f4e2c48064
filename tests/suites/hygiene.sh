#!/bin/sh
# hygiene.sh - the tree holds the product: (1) no source or doc file over 1000 lines; (2) no
# narrative of how it was built (numbered work sessions, run or call numbers, issue numbers,
# one-off scripts, experiment notes, old result files) in src include tools tests bench docs
# README.md Makefile; (3) every environment variable the product reads (getenv / util_env_on
# literals in src include tools bench) is a row of docs/env.md's table, is read in exactly one
# place, and the table has at most 20 rows; (4) every variable the tests' C code reads is in
# docs/tests.md "Environment" or docs/env.md; (5) docs/performance.md is what `make
# perf-report` writes from bench/results/. Data (tests/data) and the result records
# (bench/results) are not source. Each failure names the file and line. Needs python3.
# Last line "hygiene: N passed, N failed".
cd "$(dirname "$0")/../.." || exit 1
command -v python3 >/dev/null 2>&1 || {
    echo "hygiene: python3 not found"
    echo "hygiene: 0 passed, 1 failed"
    exit 1
}
exec python3 - <<'PY'
import os, re, subprocess, sys, tempfile

passed = failed = 0
def result(ok, name, detail=()):
    global passed, failed
    if ok:
        passed += 1
        print("  ok   " + name)
    else:
        failed += 1
        print("  FAIL " + name)
        for d in list(detail)[:40]:
            print("    | " + d)

def tracked(roots):
    try:
        out = subprocess.run(["git", "ls-files", "--"] + roots, capture_output=True, text=True, check=True).stdout
        files = [f for f in out.splitlines() if os.path.isfile(f)]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for r in roots:
            if os.path.isfile(r):
                files.append(r)
            for d, _, fs in os.walk(r):
                files += [os.path.join(d, f) for f in fs]
    return [f for f in files if not f.startswith(("tests/data/", "bench/results/", "build"))]

def text(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None

roots = ["src", "include", "tools", "tests", "bench", "docs", "README.md", "Makefile"]
files = tracked(roots)

# (1) file length
long_files = []
for f in files:
    t = text(f)
    if t is not None and t.count("\n") > 1000:
        long_files.append("%s: %d lines" % (f, t.count("\n")))
result(not long_files, "no file over 1000 lines (%d files)" % len(files), long_files)

# (2) narrative. The pattern is built from pieces so that this file does not match itself.
S = "s" + "ession"
pieces = [
    r"\b%ss? [0-9]" % S,                         # numbered work periods
    r"\bs[0-9]{2,3}\.sh\b",                      # one-off call scripts
    r"\bbench/" + r"(final|notes-|tune)",        # experiment debris
    r"\btests/hw/" + r"logs",
    r"\bbench/results/[a-z0-9-]+/[A-Za-z0-9_-]*20[0-9]{2}-",  # old dated result files
    r"\bwaves? [0-9]",
    r"\bissues? #?[0-9]",
    r"\bcalls? [0-9]+\b",
    r"[(,/] ?s(?!16\b|32\b|64\b)[0-9]{2,3}\b",     # run numbers: (s86, s157 / s158 (not s16/s32/s64)
    r"\bs(?!16\b|32\b|64\b)[0-9]{2,3}[,/)]",
]
narr = re.compile("|".join(pieces), re.I)
hits = []
for f in files:
    if f == "tests/suites/hygiene.sh":
        continue
    t = text(f)
    if t is None:
        continue
    for i, line in enumerate(t.splitlines(), 1):
        if narr.search(line):
            hits.append("%s:%d: %s" % (f, i, line.strip()[:120]))
result(not hits, "no narrative of how it was built (work periods, runs, issues, one-off scripts)", hits)
# the pattern itself must catch what it is for and leave code alone
must = ["in %s 21 we" % S, "(s86, H100)", "bench/final/x.sh", "s1" + "31.sh", "issue 13", "wave 1", "(H100, s157 / s158)"]
mustnot = ["handle @0, s32 numa_nid @16", "(s64 v, s16)", "uint16_t s16 = 0;", "q6_run(a, s0, s1);", "(s0, s1)", "k_llm_matvec_q8_q4k_w2", "s2 = 4"]
bad = [m for m in must if not narr.search(m)] + ["matched: " + m for m in mustnot if narr.search(m)]
result(not bad, "the narrative pattern catches its examples and no code", bad)

# (3) the product's environment variables against docs/env.md
read = re.compile(r'\b(?:getenv|util_env_on)\("([A-Z][A-Z0-9_]*)"\)')
sites = {}
for f in tracked(["src", "include", "tools", "bench"]):
    if not f.endswith((".c", ".h", ".cu", ".cuh")):
        continue
    t = text(f) or ""
    for i, line in enumerate(t.splitlines(), 1):
        for name in read.findall(line):
            sites.setdefault(name, []).append("%s:%d" % (f, i))
def table_names(path, section=None):
    t = text(path)
    if t is None:
        return None
    if section:
        m = re.search(r"^## %s\s*$(.*?)(?=^## |\Z)" % re.escape(section), t, re.M | re.S)
        t = m.group(1) if m else ""
    names, rows = set(), 0
    for line in t.splitlines():
        cells = line.split("|")
        if len(cells) > 2 and line.lstrip().startswith("|") and "`" in cells[1]:
            rows += 1
            names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", cells[1]))
    return names, rows
env = table_names("docs/env.md")
if env is None:
    result(False, "docs/env.md lists every variable the product reads", ["docs/env.md: missing"])
else:
    names, rows = env
    missing = ["%s (read at %s) is not in docs/env.md" % (n, ", ".join(s)) for n, s in sorted(sites.items()) if n not in names]
    result(not missing, "docs/env.md lists every variable the product reads (%d)" % len(sites), missing)
    twice = ["%s read in %d places: %s" % (n, len(s), ", ".join(s)) for n, s in sorted(sites.items()) if len(s) > 1]
    result(not twice, "each variable read in one place", twice)
    unread = ["%s is in docs/env.md but the product does not read it" % n for n in sorted(names - set(sites))]
    result(not unread, "docs/env.md lists no variable the product does not read", unread)
    result(rows <= 20, "at most 20 switches (docs/env.md has %d rows)" % rows)

# (4) the tests' variables
tnames = table_names("docs/tests.md", "Environment")
tread = {}
for f in tracked(["tests"]):
    if f.endswith((".c", ".h")):
        for i, line in enumerate((text(f) or "").splitlines(), 1):
            for name in re.findall(r'\bgetenv\("([A-Z][A-Z0-9_]*)"\)', line):
                tread.setdefault(name, "%s:%d" % (f, i))
known = (tnames[0] if tnames else set()) | (env[0] if env else set())
tmiss = ["%s (read at %s) is in neither docs/tests.md \"Environment\" nor docs/env.md" % (n, s) for n, s in sorted(tread.items()) if n not in known]
result(tnames is not None and not tmiss, "docs/tests.md lists every variable the tests read (%d)" % len(tread), tmiss)

# (5) docs/performance.md is generated from the current record
with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "performance.md")
    r = subprocess.run([sys.executable, "bench/perf_report.py", out], capture_output=True, text=True)
    same = r.returncode == 0 and text(out) == text("docs/performance.md")
    result(same, "docs/performance.md is what make perf-report writes", [r.stderr.strip()] if r.stderr.strip() else
           ["run `make perf-report` and commit docs/performance.md"])

print("hygiene: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PY

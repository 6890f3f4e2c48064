#!/usr/bin/env python3
# clk_runs.py CLK_CSV RUNS_TXT - the SM clock, memory clock and board power that nvidia-smi sampled
# (CLK_CSV: --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv,noheader -lms N)
# during each run of RUNS_TXT (lines "START END label..." in epoch seconds; the first 0.3 s of a
# run, the model load, left out), one line per run. Used by s38.sh, s43.sh, s44.sh.
import sys, datetime
clk = []
for ln in open(sys.argv[1]):
    f = [x.strip() for x in ln.split(',')]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        clk.append((t, float(f[1].split()[0]), float(f[2].split()[0]), float(f[3].split()[0])))
    except Exception:
        pass
for ln in open(sys.argv[2]):
    p = ln.split()
    a, b = float(p[0]), float(p[1])
    s = [c for c in clk if a + 0.3 < c[0] < b]
    m = lambda i: sum(c[i] for c in s) / len(s) if s else float('nan')
    print(" ".join(p[2:]), "| sm %.0f MHz mem %.0f MHz %.0f W (%d samples)" % (m(1), m(2), m(3), len(s)))

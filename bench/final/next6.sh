#!/bin/bash
# next6.sh OUT - the first H100 call of the session after session 6 (~7 min): s28.sh (the rm PDL
# wrong-output bug: dep_wait_mixed, e2e A/Bs under each membar hypothesis) then s29.sh (the
# evict-first weight loads, tg128 A/B with PDL off and on, ncu stalls).
set -u
out=${1:?usage: next6.sh OUT}
echo "==== s28"; bash bench/final/s28.sh "$out/s28" 2>&1 | tail -40
echo "==== s29"; bash bench/final/s29.sh "$out/s29" 2>&1 | tail -60

#!/bin/bash
# s135.sh OUT - session 18 (either GPU; carry .llqb .commit; ~6 min): settings measured before the O
# projection ran as row pairs (session 17), measured again now that the next launch's CTAs start
# beside O's (s134 turned Q4_0's gate|up onto the two-group kernel: lost in session 14, +2.2% now).
# One binary, variants by environment against the default, alternating, two rounds, tg128 rm:0:
#   Q8_0    nogu_x2 (NVHCQ_MVQ_X2=0xC040C: gate|up on the one-group kernel), l2pf (NVHCQ_L2PF=1)
#   Q4_0    l2pf
#   Q6_K    w2 (NVHCQ_MVQ_W2=0x1C: Q6_K's Q|K|V, O, down with two passes before the PDL wait), l2pf
#   Q4_K_M  w2 (0x2D: Q4_K and the Q4_K+Q6_K Q|K|V)      Q5_K_M  w2 (0x4E: Q5_K and Q5_K+Q6_K)
# then test_llm_e2e and test_llm_matvec on rm:0 and cuda:0 at the new default.
set -u
OUT=${1:?usage: s135.sh OUT}
mkdir -p "$OUT"
export T0=$(date +%s)
. bench/final/lib.sh
call_build || exit 1
quant_files Q8_0 Q4_0 Q6_K Q4_K_M Q5_K_M >"$OUT/quant.log" 2>&1
cat "$OUT/quant.log"
for r in 1 2; do
    F=/tmp/q/Q8_0.gguf
    echo "Q8_0 r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q8_0 r$r [nogu_x2] tg128: $(env_cell NVHCQ_MVQ_X2=0xC040C)"
    echo "Q8_0 r$r [l2pf] tg128: $(env_cell NVHCQ_L2PF=1)"
    F=/tmp/q/Q4_0.gguf
    echo "Q4_0 r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q4_0 r$r [l2pf] tg128: $(env_cell NVHCQ_L2PF=1)"
    F=/tmp/q/Q6_K.gguf
    echo "Q6_K r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q6_K r$r [w2] tg128: $(env_cell NVHCQ_MVQ_W2=0x1C)"
    echo "Q6_K r$r [l2pf] tg128: $(env_cell NVHCQ_L2PF=1)"
    F=/tmp/q/Q4_K_M.gguf
    echo "Q4_K_M r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q4_K_M r$r [w2] tg128: $(env_cell NVHCQ_MVQ_W2=0x2D)"
    F=/tmp/q/Q5_K_M.gguf
    echo "Q5_K_M r$r [base] tg128: $(env_cell NVHCQ_X=0)"
    echo "Q5_K_M r$r [w2] tg128: $(env_cell NVHCQ_MVQ_W2=0x4E)"
done 2>&1 | tee "$OUT/a_tg.txt"
echo "== tg done $(($(date +%s) - T0)) s"
for t in test_llm_e2e test_llm_matvec; do
    HCQ_TEST_DEVS='rm:0 cuda:0' timeout 150 build/tests/$t >"$OUT/t_$t.txt" 2>&1
    echo "$t rc=$? $(grep -E "FAIL|passed" "$OUT/t_$t.txt" | tr '\n' ' ')"
done
dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
echo "== end $(($(date +%s) - T0)) s"

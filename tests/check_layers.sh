#!/bin/sh
# check_layers.sh - enforce the dependency rules of docs/style.md 2.1 (layers: docs/architecture.md
# §2) by reading the #include "..." lines of every file under src/, tools/ and bench/. A file may
# include headers from (a folder allows its subfolders; a path ending in .h allows that file only):
#   util     include src/util
#   gpu      include src/util src/gpu
#   core     include src/util src/gpu src/core
#   ops      include src/util src/core src/ops src/kernels
#   engine   include src/util src/gpu src/core src/engine
#   backend  include src/util src/gpu src/core src/backend src/ops
#   kmd      include src/util src/gpu src/core src/engine src/kmd
#   emu      include src/util src/gpu src/core src/engine src/kmd src/emu src/ops
#   llm      include src/llm src/kernels src/util
#   kernels  src/kernels
#   tools    include tools bench src/ops src/kernels src/kmd/klog.h
#   bench    include bench src/ops src/kernels
# tools and bench see the public headers, the kernels' launchers and parameter structs (src/ops,
# src/kernels) and, for tools, the kernel-log classifier (the one internal API they use).
# Prints "layers: N passed, N failed" (one check per file).
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp)
find src include tools bench -name '*.h' | while read -r h; do
    echo "$(basename "$h") $(dirname "$h")"
done > "$tmp"
pass=0
fail=0
for f in $(find src tools bench -name '*.c' -o -name '*.h' -o -name '*.cu' | sort); do
    case $f in
        tools/*) layer=tools ;;
        bench/*) layer=bench ;;
        *) layer=$(echo "$f" | cut -d/ -f2) ;;
    esac
    case $layer in
        util) allowed="include src/util" ;;
        gpu) allowed="include src/util src/gpu" ;;
        core) allowed="include src/util src/gpu src/core" ;;
        ops) allowed="include src/util src/core src/ops src/kernels" ;;
        engine) allowed="include src/util src/gpu src/core src/engine" ;;
        backend) allowed="include src/util src/gpu src/core src/backend src/ops" ;;
        kmd) allowed="include src/util src/gpu src/core src/engine src/kmd" ;;
        emu) allowed="include src/util src/gpu src/core src/engine src/kmd src/emu src/ops" ;;
        llm) allowed="include src/llm src/kernels src/util" ;;
        kernels) allowed="src/kernels" ;;
        tools) allowed="include tools bench src/ops src/kernels src/kmd/klog.h" ;;
        bench) allowed="include bench src/ops src/kernels" ;;
        *) allowed="" ;;
    esac
    bad=""
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        base=$(basename "$inc")
        dir=$(awk -v b="$base" '$1 == b { print $2; exit }' "$tmp")
        [ -z "$dir" ] && continue # generated or system header
        ok=0
        for a in $allowed; do
            case $dir in
                "$a" | "$a"/*) ok=1 ;;
            esac
            [ "$dir/$base" = "$a" ] && ok=1
        done
        [ $ok -eq 1 ] || bad="$bad $inc($dir)"
    done
    if [ -n "$bad" ]; then
        echo "  FAIL $f ($layer) includes:$bad"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
done
rm -f "$tmp"
echo "layers: $pass passed, $fail failed"
[ $fail -eq 0 ]

#!/bin/sh
# check_layers.sh - enforce the dependency rules of STYLE.md 2.1 by reading #include lines:
#   util -> include, util;  gpu -> gpu, util;  core -> core, gpu, util;  ops -> ops, kernels, core, util
#   engine -> engine, gpu, core, util;  backend -> backend, core, gpu, ops, util;
#   kmd -> kmd, engine, gpu, core, util;  emu -> emu, kmd (sys.h), engine, gpu, core, ops, util;
#   llm -> llm, kernels (param headers), util, include only (never core/engine/kmd internals);
#   kernels -> kernels.
# Prints "layers: N passed, N failed" (one check per source file).
cd "$(dirname "$0")/.." || exit 1
tmp=$(mktemp)
find src include -name '*.h' | while read -r h; do
    echo "$(basename "$h") $(dirname "$h")"
done > "$tmp"
pass=0
fail=0
for f in $(find src -name '*.c' -o -name '*.h' -o -name '*.cu' | sort); do
    layer=$(echo "$f" | cut -d/ -f2)
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
        *) allowed="" ;;
    esac
    bad=""
    for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
        dir=$(awk -v b="$(basename "$inc")" '$1 == b { print $2; exit }' "$tmp")
        [ -z "$dir" ] && continue # generated or system header
        ok=0
        for a in $allowed; do
            case $dir in
                "$a" | "$a"/*) ok=1 ;;
            esac
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

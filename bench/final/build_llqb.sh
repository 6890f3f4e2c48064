#!/bin/bash
# build_llqb.sh [ANCHOR_DIR] - on the host (not the GPU machine): llama.cpp's quantizer alone, a
# static CPU build of the anchor's pruned source, into .llqb/llama-quantize (ignored; add /.llq/
# and /.llqb/ to .git/info/exclude). The device-call scripts from s87 on carry it (`carry:
# [".llqb", ...]`) to write the same llama-quantize files bench/vs-llamacpp.sh writes, without
# the 5-minute CUDA build. ~8 min on 2 cores. ANCHOR_DIR: the folder with llama.cpp-src.tar.xz
# (default .anchor/llamacpp, a copy of ../shared/anchors/llamacpp).
set -eu
cd "$(dirname "$0")/../.."
src=${1:-.anchor/llamacpp}
[ -x .llqb/llama-quantize ] && { echo ".llqb/llama-quantize exists"; exit 0; }
mkdir -p .llq .llqb
[ -f .llq/CMakeLists.txt ] || xz -dc "$src/llama.cpp-src.tar.xz" | tar -xf - -C .llq
cmake -S .llq -B .llq/b -G Ninja -DGGML_CUDA=OFF -DBUILD_SHARED_LIBS=OFF -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF \
    -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_APP=OFF \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXE_LINKER_FLAGS=-static >.llq/cfg.log 2>&1 || { tail -20 .llq/cfg.log; exit 1; }
cmake --build .llq/b -j"$(nproc)" --target llama-quantize >.llq/build.log 2>&1 || { tail -30 .llq/build.log; exit 1; }
cp .llq/b/bin/llama-quantize .llqb/ && strip .llqb/llama-quantize
ls -la .llqb/llama-quantize

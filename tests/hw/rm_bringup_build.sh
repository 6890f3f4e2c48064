#!/bin/sh
# Build tests/hw/rm_bringup against build/libnvhcq.a (run `make` first). Usage: rm_bringup_build.sh OUT
set -e
cc -std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Werror -Iinclude -Isrc/util -Isrc/core -Isrc/gpu -Isrc/engine \
   -Isrc/kmd -Isrc/kmd/rm tests/hw/rm_bringup.c build/libnvhcq.a -lpthread -ldl -lm -o "${1:-build/rm_bringup}"

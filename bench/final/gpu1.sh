#!/bin/bash
# gpu1.sh OUT - build, llama.cpp anchor build in the background, make test-gpu (bench/final/README.md).
set -u
out=${1:?usage: gpu1.sh OUT}
mkdir -p "$out"
t0=$(date +%s)
if [ -f .anchor/llamacpp/build.sh ] && [ ! -x .llbuild/b/bin/llama-bench ]; then
    (nice -n 10 bash .anchor/llamacpp/build.sh "$PWD/.llbuild" 90 >"$out/llama-build.log" 2>&1
     echo "llama.cpp build rc=$? after $(($(date +%s) - t0)) s" >>"$out/llama-build.log") &
fi
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1
echo "commit ${NVHCQ_COMMIT:-unknown}" >>"$out/gpu.txt"
make -j16 CUARCH=90 >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
echo "nvhcq built after $(($(date +%s) - t0)) s"
set -o pipefail
SKIP_SUITES="aarch64" timeout 420 make CUARCH=90 test-gpu >"$out/test-gpu.log" 2>&1
echo "make test-gpu rc=$? after $(($(date +%s) - t0)) s"
HCQ_TEST_DEVS="rm:0 cuda:0" timeout 150 make CUARCH=90 test-stress >"$out/test-stress.log" 2>&1
echo "make test-stress rc=$? after $(($(date +%s) - t0)) s"; tail -3 "$out/test-stress.log"
grep -E "^[^ ]+: [0-9]+ passed, [0-9]+ failed" "$out/test-gpu.log" | grep -v " 0 failed" || true
grep -E "^  FAIL|crashed" "$out/test-gpu.log" | head -20
tail -3 "$out/test-gpu.log"
wait
tail -2 "$out/llama-build.log" 2>/dev/null
ls .llbuild/b/bin 2>/dev/null | tr '\n' ' '
echo; echo "gpu1 done after $(($(date +%s) - t0)) s"

#!/bin/bash
# s179.sh OUT - session 24 (either GPU; carry .commit; <= 9.9 min): the whole `make test-gpu` as
# s136.sh runs it, but the build and the suites share 595 s of the call instead of 570 (s175 was
# cut at 516 s of suites on a slower H100; test_llm_matvec has since lost ~40 s).
S136_LIMIT_S=595 exec bash "$(dirname "$0")/s136.sh" "$@"

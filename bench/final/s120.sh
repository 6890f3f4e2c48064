#!/bin/bash
# s120.sh OUT - session 16's evidence call (ask nvidia-h200; carry .anchor .llqb .commit; <= 9.5 min):
# s110.sh on the session's tree with test_llm_attn_o among the LLM GPU tests.
LLM_TESTS="test_llm_e2e test_llm_real test_llm_matvec test_llm_dequant test_llm_attn_o" \
    exec bash bench/final/s110.sh "${1:?usage: s120.sh OUT}"

# tests/data/llamacpp/cases.sh - the files and inputs of refs.tsv (sourced by tests/tools/llamacpp_refs.sh,
# which writes it with llama.cpp, and tests/suites/llamacpp_refs.sh, which checks nvhcq against it)
# preset:type, on the GPT-2 vocabulary; Phi-3 on LLaMA's SentencePiece one (its own vocabulary: 32000
# SPM tokens, then gen-model pads with Phi-3's added tokens to 32064)
CASES="tiny:f16 tiny:q8_0 tiny:q4_k qwen2-tiny:f16 qwen2-tiny:q8_0 qwen2-tiny:q4_k qwen3-tiny:f16 qwen3-tiny:q8_0 qwen3-tiny:q4_k phi3-tiny:f16 phi3-tiny:q8_0 phi3-tiny:q4_k gemma2-tiny:f16 gemma2-tiny:q8_0 gemma2-tiny:q4_k gemma3-tiny:f16 gemma3-tiny:q8_0 gemma3-tiny:q4_k gemma3-tiny-linear:f16 gemma3-tiny-linear:q4_k"
VOCAB=tests/data/tokenizers/ggml-vocab-gpt-2.gguf
VOCAB_PHI3=tests/data/tokenizers/ggml-vocab-llama-spm.gguf
SEED=7
PROMPT="Once upon a time"
N=24
TEXT=tests/data/text/story-ppl.txt

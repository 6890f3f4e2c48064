# fuzz.mk - `make fuzz`: every tests/fuzz/fuzz_<x>.c becomes a libFuzzer binary (clang,
# ASan+UBSan) linked against the library built the same way in $(FUZZ_BUILD)/, then runs for
# FUZZ_TIME seconds from its seed corpus (SEEDS_fuzz_<x>, default tests/fuzz/seeds_fuzz_<x> if it
# exists; new inputs go to $(FUZZ_BUILD)/corpus_<x>).
# Each run prints "fuzz_<x>: 1 passed, 0 failed" or "... 0 passed, 1 failed" (crash input kept).
FUZZ_BUILD ?= build-fuzz
FUZZ_TIME ?= 20
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(FUZZ_SRCS))
FUZZ_INC := $(addprefix -I,include src/util src/core src/ops src/kernels src/gpu src/engine src/kmd \
            $(patsubst %/,%,$(wildcard src/kmd/*/ src/backend/*/)) src/emu src/llm tests)

SEEDS_fuzz_cubin := tests/data

.PHONY: all lib run
all: run

lib:
	$(MAKE) -f Makefile CC=$(FUZZ_CC) BUILD=$(FUZZ_BUILD) NOCUDA=1 \
	    CFLAGS="-fsanitize=fuzzer-no-link $(FUZZ_SAN) -Wno-error -DFUZZING" $(FUZZ_BUILD)/libnvhcq.a

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c lib
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer $(FUZZ_SAN) -DFUZZING $(FUZZ_INC) \
	    $< $(FUZZ_BUILD)/libnvhcq.a -ldl -lm -pthread -o $@

run: $(FUZZ_BINS)
	@for b in $(FUZZ_BINS); do \
	    n=$$(basename $$b); mkdir -p $(FUZZ_BUILD)/corpus_$$n; \
	    seeds=$$(case $$n in fuzz_cubin) echo "$(SEEDS_fuzz_cubin)";; *) echo "tests/fuzz/seeds_$$n";; esac); \
	    [ -d "$$seeds" ] || seeds=; \
	    if HCQ_LOG=none $$b -max_total_time=$(FUZZ_TIME) -rss_limit_mb=2048 \
	        -artifact_prefix=$(FUZZ_BUILD)/crash_$$n- $(FUZZ_BUILD)/corpus_$$n $$seeds \
	        > $(FUZZ_BUILD)/$$n.log 2>&1; then echo "$$n: 1 passed, 0 failed"; \
	    else tail -30 $(FUZZ_BUILD)/$$n.log; echo "$$n: 0 passed, 1 failed"; fi; \
	done

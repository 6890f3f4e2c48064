# nvhcq - one Makefile (STYLE 2.10). Out-of-tree build in $(BUILD)/.
#   make            library, CLI, tests (builds .cu -> cubins when nvcc is found)
#   make test       build and run every test suite (prints "N passed, N failed" per suite)
#   make demo       self-check of the default device + what ran where
#   make bench      quick benchmark on the devices present
#   make test-stress  opt-in stress tests (minutes; HCQ_TEST_DEVS, HCQ_STRESS_S)
#   make SAN=1 ...  same with AddressSanitizer + UndefinedBehaviorSanitizer (build-san/)
#   make golden-update  rewrite tests/golden/ from the encoders (review the diff)
#   make fuzz       libFuzzer runs of tests/fuzz/ (clang; FUZZ_TIME=seconds each)
#   make cross-aarch64   cross-build for Jetson (aarch64) with Debian's cross compiler
#   make install PREFIX=/usr/local   library, header, CLI, pkg-config file
#   make format     clang-format every C file;  make clean
#   make V=1 ...    show every command (default: one "  CC file" line per step)

PREFIX ?= /usr/local

# Quiet build lines ("  CC src/x.c", "  NVCC ...", "  AR ...", "  LD ..."); V=1 prints the commands.
V ?= 0
ifeq ($(V),1)
Q :=
say :=
else
Q := @
say = echo "  $(1) $(2)";
endif
SAN ?= 0
ifeq ($(SAN),1)
BUILD ?= build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
BUILD ?= build
SANFLAGS :=
endif

CC ?= cc
HOSTCC ?= cc
AR ?= ar
OPT ?= -O2 -g
CSTD := -std=c11 -D_GNU_SOURCE
WARN := -Wall -Wextra -Werror -Wpointer-arith -Wshadow -Wno-missing-field-initializers
INCDIRS := include src/util src/core src/ops src/kernels src/gpu src/engine src/kmd \
           $(patsubst %/,%,$(wildcard src/kmd/*/ src/backend/*/)) src/emu src/llm tests
CFLAGS_ALL := $(CSTD) $(OPT) $(WARN) $(SANFLAGS) $(addprefix -I,$(INCDIRS)) -MMD -MP -pthread $(CFLAGS)
LDFLAGS_ALL := $(SANFLAGS) -pthread $(LDFLAGS)
LDLIBS_ALL := -ldl -lm $(LDLIBS)

# ---- CUDA kernels -> cubins (optional) ----
# Cubins do not depend on the host compiler or sanitizers: every build dir shares them.
CUBIN_DIR ?= build/cubin
NVCC ?= $(shell command -v nvcc 2>/dev/null || (test -x /usr/local/cuda/bin/nvcc && echo /usr/local/cuda/bin/nvcc))
# The archs the cubins are built for. Default: those of the GPUs present (nvidia-smi's compute
# capability), else 90 (Hopper, the verified arch) or 87 on an aarch64 host, so that a newcomer's `make -j2` builds one
# arch. CUARCH=all builds every supported arch (CI does; a library that will run on other GPUs
# needs it); CUARCH="87 90" picks a list.
CUARCH_ALL := 80 86 87 89 90 100 120
CUARCH_PRESENT := $(shell nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | tr -d . | sort -u)
CUARCH_HOST := $(if $(filter aarch64,$(shell uname -m)),87,90)
CUARCH ?= $(if $(CUARCH_PRESENT),$(CUARCH_PRESENT),$(CUARCH_HOST))
ifeq ($(CUARCH),all)
override CUARCH := $(CUARCH_ALL)
endif
# Arch-specific modules (wgmma, setmaxnreg: sm_90a) are built only for their arch, as
# <module>.sm_90a.cubin (embedded as sm 90); every other .cu for each arch in CUARCH.
CU_SM90A_SRCS := src/kernels/k_gemm_wgmma.cu src/kernels/k_gemm_wgmma_n128.cu src/kernels/k_gemm_wgmma_tma.cu \
	src/kernels/k_gemm_wgmma_tma_n128.cu
CU_SRCS := $(filter-out $(CU_SM90A_SRCS),$(wildcard src/kernels/*.cu))
ifneq ($(NVCC),)
ifneq ($(NOCUDA),1)
CUBINS := $(foreach a,$(CUARCH),$(patsubst src/kernels/%.cu,$(CUBIN_DIR)/%.sm_$(a).cubin,$(CU_SRCS)))
ifneq ($(filter 90,$(CUARCH)),)
CUBINS += $(patsubst src/kernels/%.cu,$(CUBIN_DIR)/%.sm_90a.cubin,$(CU_SM90A_SRCS))
endif
endif
endif
NVCCFLAGS ?= -O3 -Xptxas -O3 -std=c++17 -Isrc/kernels

LIB_SRCS := $(shell find src -name '*.c' | sort)
LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRCS)) $(BUILD)/obj/gen/hcq_cubins.o
TOOL_SRCS := $(filter-out tools/embed.c,$(wildcard tools/*.c))
TOOL_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(TOOL_SRCS))
BENCH_SRCS := $(wildcard bench/*.c)
BENCH_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(BENCH_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
SUITE_SRCS := $(wildcard tests/hcq/*.c)
SUITE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(SUITE_SRCS) tests/harness.c)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)

LIB := $(BUILD)/libnvhcq.a
CLI := $(BUILD)/nvhcq

.SECONDARY:
.PHONY: all test demo bench install clean format format-check cross-aarch64 test-gpu test-stress fuzz lint golden-update perf-report
all: $(LIB) $(CLI) $(UNIT_BINS) $(BUILD)/tests/hcq_suite

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(Q)$(call say,CC,$<)$(CC) $(CFLAGS_ALL) -c $< -o $@

define CUBIN_RULE
$(CUBIN_DIR)/%.sm_$(1).cubin: src/kernels/%.cu $(wildcard src/kernels/*.h) $(wildcard src/kernels/*.cuh)
	@mkdir -p $$(dir $$@)
	$(Q)$(call say,NVCC,$$@)$(NVCC) $(NVCCFLAGS) -arch=sm_$(1) -cubin $$< -o $$@
endef
$(foreach a,$(CUARCH),$(eval $(call CUBIN_RULE,$(a))))

# sm_90a: the -gencode form (HOPPER.md: -arch=sm_90a also ran a plain sm_90 pass that rejects
# wgmma/setmaxnreg with some nvcc versions).
$(CUBIN_DIR)/%.sm_90a.cubin: src/kernels/%.cu $(wildcard src/kernels/*.h) $(wildcard src/kernels/*.cuh)
	@mkdir -p $(dir $@)
	$(Q)$(call say,NVCC,$@)$(NVCC) $(NVCCFLAGS) -gencode=arch=compute_90a,code=sm_90a -cubin $< -o $@

# k_gemm_wgmma_n128.cu, k_gemm_wgmma_tma.cu and k_gemm_wgmma_tma_n128.cu compile k_gemm_wgmma.cu again
$(CUBIN_DIR)/k_gemm_wgmma_n128.sm_90a.cubin: src/kernels/k_gemm_wgmma.cu
$(CUBIN_DIR)/k_gemm_wgmma_tma.sm_90a.cubin: src/kernels/k_gemm_wgmma.cu
$(CUBIN_DIR)/k_gemm_wgmma_tma_n128.sm_90a.cubin: src/kernels/k_gemm_wgmma.cu

$(BUILD)/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(Q)$(call say,HOSTCC,$<)$(HOSTCC) -O2 -std=c11 -Wall -Wextra -Werror $< -o $@

# The cubin table is regenerated when the set of cubins or any cubin changes: the set is kept in
# cubins.list, rewritten only when it differs (a NOCUDA build after a CUARCH one, or another CUARCH).
CUBIN_LIST := $(BUILD)/gen/cubins.list
$(shell mkdir -p $(BUILD)/gen && (echo '$(CUBINS)' | cmp -s - $(CUBIN_LIST) || echo '$(CUBINS)' > $(CUBIN_LIST)))
$(BUILD)/gen/hcq_cubins.c: $(BUILD)/embed $(CUBINS) $(CUBIN_LIST) Makefile
	@mkdir -p $(dir $@)
	$(Q)$(call say,EMBED,$@)$(BUILD)/embed $@ $(CUBINS)

$(BUILD)/obj/gen/hcq_cubins.o: $(BUILD)/gen/hcq_cubins.c
	@mkdir -p $(dir $@)
	$(Q)$(call say,CC,$<)$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(Q)rm -f $@; $(call say,AR,$@)$(AR) rcs $@ $^

# ---- `nvhcq serve`: libmicrohttpd + jansson (optional; docs/serve.md) ----
# DEPS=DIR: the -dev and runtime packages unpacked there by tools/deps-fetch.sh (dpkg -x), for
# a machine without a package registry: linked statically where the .a files exist. Else
# pkg-config. Else (or SERVE=0) `nvhcq serve` says it was not built and how to get it.
SERVE ?= 1
SERVE_CFLAGS :=
SERVE_LIBS :=
ifeq ($(SERVE),1)
ifneq ($(DEPS),)
SERVE_LIBDIR := $(DEPS)/usr/lib/$(shell $(CC) -dumpmachine)
ifneq ($(wildcard $(DEPS)/usr/include/microhttpd.h $(DEPS)/usr/include/jansson.h),)
SERVE_CFLAGS := -DNVHCQ_HAVE_SERVE -isystem $(DEPS)/usr/include
ifneq ($(wildcard $(SERVE_LIBDIR)/libmicrohttpd.a),)
# Debian's libmicrohttpd is built with GnuTLS: its runtime library (in every Debian/Ubuntu base) by soname
SERVE_LIBS := $(SERVE_LIBDIR)/libmicrohttpd.a $(SERVE_LIBDIR)/libjansson.a -l:libgnutls.so.30
else
SERVE_LIBS := -L$(SERVE_LIBDIR) -Wl,-rpath,$(abspath $(SERVE_LIBDIR)) -lmicrohttpd -ljansson
endif
endif
# pkg-config answers for the build machine: a cross compiler (make cross-aarch64) must find the
# libraries itself, or the server is left out
else ifeq ($(shell pkg-config --exists libmicrohttpd jansson 2>/dev/null && \
	test -f "$$($(CC) -print-file-name=libmicrohttpd.so)" && echo y),y)
SERVE_CFLAGS := -DNVHCQ_HAVE_SERVE $(shell pkg-config --cflags libmicrohttpd jansson)
SERVE_LIBS := $(shell pkg-config --libs libmicrohttpd jansson)
endif
endif
# the serve objects are rebuilt when the choice changes (serve.cfg rewritten only when it differs)
SERVE_CFG := $(BUILD)/gen/serve.cfg
$(shell mkdir -p $(BUILD)/gen && (echo '$(SERVE_CFLAGS) $(SERVE_LIBS)' | cmp -s - $(SERVE_CFG) || echo '$(SERVE_CFLAGS) $(SERVE_LIBS)' > $(SERVE_CFG)))
SERVE_OBJS := $(filter $(BUILD)/obj/tools/serve_% $(BUILD)/obj/tools/nvhcq_serve.o,$(TOOL_OBJS))
$(SERVE_OBJS): CFLAGS_ALL += $(SERVE_CFLAGS)
$(SERVE_OBJS): $(SERVE_CFG)

$(CLI): $(TOOL_OBJS) $(BENCH_OBJS) $(LIB) $(SERVE_CFG)
	$(Q)$(call say,LD,$@)$(CC) $(LDFLAGS_ALL) $(TOOL_OBJS) $(BENCH_OBJS) $(LIB) $(SERVE_LIBS) $(LDLIBS_ALL) -o $@

$(BUILD)/obj/tests/harness.o: tests/harness.c
$(BUILD)/tests/test_%: $(BUILD)/obj/tests/unit/test_%.o $(BUILD)/obj/tests/harness.o $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(call say,LD,$@)$(CC) $(LDFLAGS_ALL) $^ $(LDLIBS_ALL) -o $@

$(BUILD)/tests/hcq_suite: $(SUITE_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(call say,LD,$@)$(CC) $(LDFLAGS_ALL) $^ $(LDLIBS_ALL) -o $@

# Run every suite; each prints "N passed, N failed"; the script prints the total last.
test: all
	@BUILD=$(BUILD) sh tests/run_all.sh

# GPU-only suites (stress, sustained load, dmesg checks); run on the device machine.
test-gpu: all
	@BUILD=$(BUILD) GPU=1 sh tests/run_all.sh

# Opt-in stress tests (minutes): the HCQ suite's stress_* on HCQ_TEST_DEVS (default cpu and
# emu:gh100; GPUs: HCQ_TEST_DEVS="rm:0 cuda:0"), kernel log checked per test; HCQ_STRESS_S sets
# the sustained parts (default 60 s on GPUs, 5 s elsewhere).
test-stress: all
	@for d in $${HCQ_TEST_DEVS:-cpu emu:gh100}; do $(BUILD)/tests/hcq_suite --dev $$d --slow --klog stress_ || exit 1; done

demo: $(CLI)
	$(CLI) demo

bench: $(CLI)
	$(CLI) bench --quick

# docs/performance.md from the current record of results, bench/results/<gpu>/ (no GPU needed).
perf-report:
	python3 bench/perf_report.py

# Rewrite tests/golden/*.txt from the current encoders; review the diff before committing.
golden-update: all
	GOLDEN_UPDATE=1 $(BUILD)/tests/test_gpu goldens

fuzz:
	$(MAKE) -C . -f tests/fuzz/fuzz.mk BUILD=$(BUILD)

cross-aarch64:
	$(MAKE) CC=aarch64-linux-gnu-gcc AR=aarch64-linux-gnu-ar BUILD=build-aarch64 NOCUDA=$(NOCUDA) all

install: $(LIB) $(CLI)
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/
	install -m 644 include/hcq.h $(wildcard include/llm.h) $(DESTDIR)$(PREFIX)/include/
	install -m 755 $(CLI) $(DESTDIR)$(PREFIX)/bin/
	sed -e 's|@PREFIX@|$(PREFIX)|' nvhcq.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/nvhcq.pc

format:
	$(CLANG_FORMAT) -i $$(find src tools tests bench include -name '*.[ch]')

# List the files clang-format would change and fail when there are any (CLANG_FORMAT=... picks
# the binary). A CI step (.ci/run): `make format` before committing.
CLANG_FORMAT ?= clang-format
format-check:
	@command -v $(CLANG_FORMAT) >/dev/null || { echo "format-check: $(CLANG_FORMAT) not found"; exit 2; }
	@n=0; for f in $$(find src tools tests bench include -name '*.[ch]' | sort); do \
	    if ! $(CLANG_FORMAT) "$$f" | cmp -s - "$$f"; then echo "  differs: $$f"; n=$$((n+1)); fi; done; \
	    echo "format-check: $$n file(s) differ from .clang-format"; [ $$n -eq 0 ]

lint:
	sh tests/check_layers.sh

clean:
	rm -rf build build-san build-aarch64 build-fuzz

-include $(shell test -d $(BUILD)/obj && find $(BUILD)/obj -name '*.d')

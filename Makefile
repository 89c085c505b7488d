# shimbench: one top-level Makefile.
#   make            build build/shimbench (only builds: packages are
#                   installed by make deps, which demo and check call)
#   make check      build and run every test (unit + end-to-end)
#   make demo       the main job on the built-in default
#   make install PREFIX=/usr/local   the binary, its data files, and links
#                   to the provisioned llama-bench (see install.sh)
#   make check      runs the suite once, under ASan+UBSan: the binary and
#                   the unit tests from build-san/ (CHECK_SANITIZE= for a
#                   plain build/ run)
.DEFAULT_GOAL := all
CC ?= cc
PREFIX ?= /usr/local
SANITIZE ?=
OPT ?= -O2 -g
CFLAGS ?= $(OPT)
ALL_CFLAGS = -std=c11 -Wall -Wextra -Wno-unused-parameter -MMD -MP $(CFLAGS)
LDLIBS_EXTRA =
UNAME_S := $(shell uname -s)
ifeq ($(UNAME_S),Darwin)
  BREW := $(shell brew --prefix 2>/dev/null)
  ALL_CFLAGS += $(if $(BREW),-I$(BREW)/include)
  LIBS = $(if $(BREW),-L$(BREW)/lib) -lcjson -lsqlite3 -lm -lpthread
else
  LIBS = -lcjson -lsqlite3 -lcrypto -lm -lpthread
endif
# gcc leaves float-cast-overflow out of "undefined": named with it.
SANITIZERS = $(SANITIZE)$(if $(findstring undefined,$(SANITIZE)),$(comma)float-cast-overflow)
comma := ,
ifneq ($(SANITIZE),)
  ALL_CFLAGS += -fsanitize=$(SANITIZERS) -fno-omit-frame-pointer
  LDFLAGS += -fsanitize=$(SANITIZERS)
  BUILD ?= build-san
else
  BUILD ?= build
endif

# The library, in layers (bench/t/README.md says which may include
# which; bench/scripts/check-layers.sh enforces it). One object per line.
LIB_OBJS =
# base: buffers, errors, files, processes
LIB_OBJS += base/util.o
LIB_OBJS += base/files.o
LIB_OBJS += base/proc.o
LIB_OBJS += base/json.o
LIB_OBJS += base/opt.o
LIB_OBJS += base/rng.o
# models: GGUF, synthetic models, manifest, hashing
LIB_OBJS += models/hash.o
LIB_OBJS += models/gguf.o
LIB_OBJS += models/synth.o
LIB_OBJS += models/manifest.o
LIB_OBJS += models/fetch.o
# evidence: the store, bundles, parsers of what llama-bench and MLX-LM print
LIB_OBJS += evidence/store.o
LIB_OBJS += evidence/store-check.o
LIB_OBJS += evidence/store-records.o
LIB_OBJS += evidence/store-query.o
LIB_OBJS += evidence/store-noise.o
LIB_OBJS += evidence/store-owner.o
LIB_OBJS += evidence/selection.o
LIB_OBJS += evidence/runrec.o
LIB_OBJS += evidence/state.o
LIB_OBJS += evidence/derive.o
LIB_OBJS += evidence/bundle.o
LIB_OBJS += evidence/bundleread.o
LIB_OBJS += evidence/bundlewrite.o
LIB_OBJS += evidence/hashcache.o
LIB_OBJS += evidence/modelverify.o
LIB_OBJS += evidence/llamabench.o
LIB_OBJS += evidence/lbfields.o
LIB_OBJS += evidence/lbjson.o
LIB_OBJS += evidence/lbscan.o
LIB_OBJS += evidence/lbmd.o
LIB_OBJS += evidence/lbcsv.o
LIB_OBJS += evidence/lbsqlin.o
LIB_OBJS += evidence/lbsql.o
LIB_OBJS += evidence/mlxlm.o
LIB_OBJS += evidence/caps.o
LIB_OBJS += evidence/capslines.o
LIB_OBJS += evidence/capsgpu.o
LIB_OBJS += evidence/capsjson.o
LIB_OBJS += evidence/capsverify.o
LIB_OBJS += evidence/hints.o
LIB_OBJS += evidence/fingerprint.o
LIB_OBJS += evidence/fingerprint-here.o
LIB_OBJS += evidence/sums.o
# run: plans, targets, transports, the run engine
LIB_OBJS += run/plan.o
LIB_OBJS += run/ablate.o
LIB_OBJS += run/transports.o
LIB_OBJS += run/transport.o
LIB_OBJS += run/transport-local.o
LIB_OBJS += run/transport-ssh.o
LIB_OBJS += run/transport-lume.o
LIB_OBJS += run/transport-tart.o
LIB_OBJS += run/tools.o
LIB_OBJS += run/launchagent.o
LIB_OBJS += run/shimlib.o
LIB_OBJS += run/target.o
LIB_OBJS += run/variant.o
LIB_OBJS += run/schedule.o
LIB_OBJS += run/session.o
# analysis: statistics, comparisons, reports, charts
LIB_OBJS += analysis/stats.o
LIB_OBJS += analysis/compare.o
LIB_OBJS += analysis/mwu.o
LIB_OBJS += analysis/workload.o
LIB_OBJS += analysis/outliers.o
LIB_OBJS += analysis/gate.o
LIB_OBJS += analysis/gateinject.o
LIB_OBJS += analysis/gateseq.o
LIB_OBJS += analysis/sequential.o
LIB_OBJS += analysis/baseline.o
LIB_OBJS += analysis/changepoint.o
LIB_OBJS += analysis/report.o
LIB_OBJS += analysis/capfacts.o
LIB_OBJS += analysis/captable.o
LIB_OBJS += analysis/ablation.o
LIB_OBJS += analysis/table.o
LIB_OBJS += analysis/render.o
LIB_OBJS += analysis/headline.o
LIB_OBJS += analysis/provenance.o
LIB_OBJS += analysis/plot.o
LIB_OBJS += analysis/html.o
LIB_OBJS += analysis/published.o

# cmd: one file per subcommand, registered in cmd/main.c.
CMD_OBJS =
CMD_OBJS += cmd/doctor.o
CMD_OBJS += cmd/run.o
CMD_OBJS += cmd/run-until.o
CMD_OBJS += cmd/export.o
CMD_OBJS += cmd/sessions.o
CMD_OBJS += cmd/import.o
CMD_OBJS += cmd/inspect.o
CMD_OBJS += cmd/report.o
CMD_OBJS += cmd/compare.o
CMD_OBJS += cmd/gate.o
CMD_OBJS += cmd/history.o
CMD_OBJS += cmd/calibrate.o
CMD_OBJS += cmd/reproduce.o
CMD_OBJS += cmd/models.o
CMD_OBJS += cmd/shim.o
CMD_OBJS += cmd/upgrade.o
CMD_OBJS += cmd/progress.o

# The shim itself, its tests and the Mach-O cross-check live in
# shim/Makefile; make check runs them through bench/t/e2e/t5000-t5003,
# the Vulkan shim's (shim/vulkan/Makefile) through t5200-t5210.

LIB := $(addprefix $(BUILD)/obj/,$(LIB_OBJS))
CMDS := $(addprefix $(BUILD)/obj/,$(CMD_OBJS))
MAIN := $(BUILD)/obj/cmd/main.o
BIN := $(BUILD)/shimbench
UNIT_SRCS := $(wildcard bench/t/unit/test-*.c)
UNIT_BINS := $(patsubst bench/t/unit/%.c,$(BUILD)/t/%,$(UNIT_SRCS))
HELPER_SRCS := $(filter-out bench/t/helpers/lib%,$(wildcard bench/t/helpers/*.c))
HELPER_BINS := $(patsubst bench/t/helpers/%.c,$(BUILD)/t/helpers/%,$(HELPER_SRCS))
HELPER_LIB_SRCS := $(wildcard bench/t/helpers/lib*.c)
HELPER_LIBS := $(patsubst bench/t/helpers/%.c,$(BUILD)/t/helpers/%.so,$(HELPER_LIB_SRCS))

# Fuzzing: libFuzzer targets (bench/t/fuzz/fuzz-NAME.c) built with clang
# into build-fuzz/, the library with them, every sanitizer fatal.
#   make fuzz                                  build them
#   sh bench/scripts/fuzz.sh [SECONDS]         run each over its corpus
# replay-NAME (any compiler, $(BUILD)/fuzz/) runs a corpus once without
# libFuzzer: make check replays them under the sanitizers (t8030).
FUZZ_CC ?= clang-14
FUZZ_SAN = address,undefined,float-cast-overflow
FUZZ_CFLAGS = -std=c11 -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all \
	-fsanitize=fuzzer-no-link,$(FUZZ_SAN) -Ibench/src -Ibench/t/fuzz
FUZZ_NAMES := $(patsubst bench/t/fuzz/fuzz-%.c,%,$(wildcard bench/t/fuzz/fuzz-*.c))
FUZZ_BINS := $(addprefix build-fuzz/fuzz-,$(FUZZ_NAMES))
FUZZ_LIB := $(addprefix build-fuzz/obj/,$(LIB_OBJS)) build-fuzz/obj/t/evidence-dir.o
REPLAY_BINS := $(addprefix $(BUILD)/fuzz/replay-,$(FUZZ_NAMES))

build-fuzz/obj/t/%.o: bench/t/fuzz/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

build-fuzz/obj/%.o: bench/src/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -MMD -MP -c -o $@ $<

build-fuzz/fuzz-%: bench/t/fuzz/fuzz-%.c $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,$(FUZZ_SAN) -o $@ $< \
		$(FUZZ_LIB) $(LIBS)

$(BUILD)/fuzz/evidence-dir.o: bench/t/fuzz/evidence-dir.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ibench/src -c -o $@ $<

$(BUILD)/fuzz/replay-%: bench/t/fuzz/fuzz-%.c bench/t/fuzz/replay.c \
		$(BUILD)/fuzz/evidence-dir.o $(LIB)
	$(CC) $(ALL_CFLAGS) -Ibench/src -Ibench/t/fuzz -o $@ $< \
		bench/t/fuzz/replay.c $(BUILD)/fuzz/evidence-dir.o $(LIB) \
		$(LDFLAGS) $(LIBS)

fuzz: $(FUZZ_BINS)

fuzz-replay: $(REPLAY_BINS)

.PHONY: all deps check test demo install clean llama-bench lavapipe shim shim-verify \
	fuzz fuzz-replay

all: $(BIN)

deps:
	@sh bench/scripts/deps.sh

$(BUILD)/obj/%.o: bench/src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ibench/src -c -o $@ $<

$(BIN): $(MAIN) $(CMDS) $(LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/t/%: bench/t/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -Ibench/src -o $@ $< $(LIB) $(LDFLAGS) $(LIBS)

$(BUILD)/t/helpers/%: bench/t/helpers/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LDFLAGS)

# Injected into the real llama-bench: never built with sanitizers (their
# runtime must come first in a process, which llama-bench's is not).
$(BUILD)/t/helpers/lib%.so: bench/t/helpers/lib%.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -Wall -Wextra -O2 -shared -fPIC -o $@ $<

build-tests: $(BIN) $(UNIT_BINS) $(HELPER_BINS) $(HELPER_LIBS)

# make check runs the whole suite once, with shimbench and the unit tests
# built with ASan+UBSan (issue 21): a finding in any process, whatever
# its exit status, is written under $(CHECK_BUILD)/sanitizer/ and
# bench/scripts/run-sanitized.sh fails the run on it. The libraries
# injected into llama-bench stay unsanitized, as above.
CHECK_SANITIZE ?= address,undefined
CHECK_BUILD = $(if $(CHECK_SANITIZE),build-san,build)
check: deps llama-bench lavapipe
	@$(MAKE) --no-print-directory SANITIZE=$(CHECK_SANITIZE) \
		BUILD=$(CHECK_BUILD) build-tests
	@SHIMBENCH=$(CURDIR)/$(CHECK_BUILD)/shimbench \
		SHIMBENCH_BUILD=$(CURDIR)/$(CHECK_BUILD) \
		sh bench/scripts/run-sanitized.sh $(CURDIR)/$(CHECK_BUILD)

test: check

# llama.cpp's llama-bench from Debian sid in the private prefix .llama/
llama-bench:
	@sh bench/scripts/llama-bench.sh

# The Vulkan prefix .llama/vulkan with Mesa's lavapipe (Vulkan on the CPU):
# the Vulkan capability shim's headers and its study's tests without a GPU
lavapipe:
	@sh bench/scripts/llama-bench.sh --lavapipe

# deps says nothing unless it installs; then one line per step (the logs
# under build/logs/), then the demo itself.
demo: deps
	@BUILD=$(BUILD) sh bench/scripts/step.sh llama-bench sh bench/scripts/llama-bench.sh
	@BUILD=$(BUILD) sh bench/scripts/step.sh build $(MAKE) --no-print-directory $(BIN)
	@SHIMBENCH=$(BIN) sh bench/scripts/demo.sh

install: $(BIN)
	@BIN=$(BIN) sh bench/scripts/install.sh "$(DESTDIR)" "$(PREFIX)"

clean:
	rm -rf build build-san build-fuzz

# shim: build (macOS: dylibs, probe, SHA256SUMS; Linux: the GNU-runtime
# test build and the Vulkan capability shim, shim/vulkan) and verify
# (macOS only).
shim:
	@$(MAKE) --no-print-directory -C shim

shim-verify:
	@$(MAKE) --no-print-directory -C shim verify

-include $(wildcard $(BUILD)/obj/*/*.d $(BUILD)/t/*.d build-fuzz/obj/*/*.d)

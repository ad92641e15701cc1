# pacer - build, tests, sanitizer build and benchmarks.
# Sources are found by directory: every src/**/*.c outside src/cli/ goes into
# build/libpacer.a; src/cli/*.c make build/pacer; tests/unit/test_*.c are Criterion
# binaries; tests/tools/*.c and bench/*.c are one program each.

BUILD   ?= build
CC      ?= cc
OPT     ?= -O2 -g
PKGS    := libcurl jansson libcrypto libmicrohttpd sqlite3 libpq libpcre2-8 expat libzip
WARN    := -std=c17 -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter
CFLAGS_ALL := $(OPT) $(WARN) -D_GNU_SOURCE -pthread -Isrc -I$(BUILD)/gen $(SAN) $(CFLAGS)
LDLIBS_ALL  = $(shell pkg-config --libs $(PKGS)) -lm -pthread $(SAN) $(LDFLAGS)
PKG_CFLAGS  = $(shell pkg-config --cflags $(PKGS))

LIB_SRC   := $(shell find src -name '*.c' -not -path 'src/cli/*' | sort)
CLI_SRC   := $(sort $(wildcard src/cli/*.c))
TEST_SRC  := $(sort $(wildcard tests/unit/test_*.c))
TOOL_SRC  := $(sort $(wildcard tests/tools/*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))
SUITES    := $(sort $(wildcard suites/*.json))
ASSETS    := $(sort $(wildcard src/board/assets/*))

LIB_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SRC)) $(BUILD)/obj/gen/embedded.o
CLI_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(CLI_SRC))
TESTS    := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(TEST_SRC))
TOOLS    := $(patsubst tests/tools/%.c,$(BUILD)/tools/%,$(TOOL_SRC))
BENCHES  := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all deps check sanitize bench bench-peers demo clean peers interop
.DELETE_ON_ERROR:
.SECONDARY:

# deps first, then the build (under make -j the two would otherwise run side by side)
all: deps
	@$(MAKE) --no-print-directory $(BUILD)/pacer

deps:
	@./scripts/deps.sh

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(PKG_CFLAGS) -MMD -MP -c $< -o $@

# Files embedded in the binary (the suites, the board's style sheet, script and icon): one C
# file with a table of name, bytes, size.
$(BUILD)/gen/embedded.c: $(SUITES) $(ASSETS) scripts/embed.sh
	@mkdir -p $(dir $@)
	./scripts/embed.sh $(SUITES) $(ASSETS) > $@

$(BUILD)/obj/gen/embedded.o: $(BUILD)/gen/embedded.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(BUILD)/libpacer.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BUILD)/pacer: $(CLI_OBJ) $(BUILD)/libpacer.a
	$(CC) $(CFLAGS_ALL) -o $@ $(CLI_OBJ) $(BUILD)/libpacer.a $(LDLIBS_ALL)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/libpacer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libpacer.a -lcriterion $(LDLIBS_ALL)

$(BUILD)/tools/%: $(BUILD)/obj/tests/tools/%.o $(BUILD)/libpacer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libpacer.a $(LDLIBS_ALL)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(BUILD)/libpacer.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(BUILD)/libpacer.a $(LDLIBS_ALL)

build-tests: $(BUILD)/pacer $(TESTS) $(TOOLS)

# All tests: unit (Criterion), then integration scripts; ends with "N passed, N failed".
check: deps
	@./scripts/deps.sh --npm --browser
	@$(MAKE) --no-print-directory build-tests
	@BUILD=$(BUILD) ./tests/run.sh $(T)

# The same tests on an ASan + UBSan build in build-san/.
sanitize: deps
	@./scripts/deps.sh --npm --browser
	@$(MAKE) --no-print-directory BUILD=build-san OPT="-O1 -g -fno-omit-frame-pointer" \
		SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" build-tests
	@BUILD=build-san ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 PACER_SANITIZE=1 ./tests/run.sh $(T)

bench: deps
	@$(MAKE) --no-print-directory $(BUILD)/pacer $(TOOLS) $(BENCHES)
	@BUILD=$(BUILD) ./bench/run.sh

PEERS_DIR ?= build-peers

# llama.cpp's llama-bench (built by make interop; LLAMA_BENCH or PEERS_DIR point elsewhere)
# against bench_engine on the same synthetic GGUFs, interleaved, with ratios. Builds no peer.
bench-peers: deps
	@$(MAKE) --no-print-directory $(BUILD)/bench/bench_engine
	@BUILD=$(BUILD) PEERS_DIR=$(PEERS_DIR) ./bench/peers.sh

# The demo: pacer's main job on its embedded default model.
demo: all
	@./scripts/deps.sh --npm
	./$(BUILD)/pacer bench

# pacer against a real llama.cpp server (not part of check: the peer build takes ~13 minutes
# on 2 cores, cached in $(PEERS_DIR)): npm node-llama-cpp's pinned source (peers/), built with
# CMake; a managed and an attached community-v2 run, and the log-probability check.
peers: all
	@PEERS_DIR=$(PEERS_DIR) BUILD=$(BUILD) ./scripts/peers.sh

interop: all
	@PEERS_DIR=$(PEERS_DIR) BUILD=$(BUILD) ./scripts/interop.sh

clean:
	rm -rf build build-san

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

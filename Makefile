# tpuplan: TPU memory planner. See README.md.
#
#   make              build bin/tpuplan and bin/tpuplan-server
#   make run          install what is missing, build, start PostgreSQL (embedded unless
#                     DATABASE_URL is set) and the server; prints the dashboard URL
#   make stop         stop what `make run` started
#   make test         unit tests (plain and ASan+UBSan), CLI, integration and browser tests
#   make lint         clang-format check, the planner's wing rules, clang-tidy, cppcheck
#   make bench        layout/model/runtime-replay/trace/HLO benchmarks; bench-pack, bench-server
#   make fuzz         every libFuzzer target for FUZZ_RUNS executions (make test: 15 s each)
#   make soak         SOAK_SECONDS (600) of load, faults and abuse against the server
#
# Sources are found by directory, so adding a module needs no edit here:
#   server/planner/*/*.c -> libtpuplan.a (pure planner library: no I/O, no globals)
#   server/cli/*.c      -> bin/tpuplan
#   server/service/*.c  -> bin/tpuplan-server (main.c holds main(); the rest is libservice.a)
#   tests/unit/test_*.c -> one cmocka binary each, linked with both libraries
#   tests/bench/*.c     -> one benchmark binary each

CC      ?= cc
BUILD   ?= build/release
BINDIR  ?= bin
OPT     ?= -O2 -g
SAN     ?=
WARN     = -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla \
           -Wformat=2 -Wno-format-nonliteral
PKGS     = json-c libmicrohttpd libpq
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS   = -std=c11 $(WARN) $(OPT) $(SAN) -D_GNU_SOURCE -Iserver -MMD -MP $(PKG_CFLAGS) $(EXTRA_CFLAGS)
LDFLAGS  = $(SAN) $(EXTRA_LDFLAGS)
LDLIBS   = $(PKG_LIBS) -lpthread -lm

PLANNER_SRC = $(sort $(wildcard server/planner/*/*.c))
CLI_SRC     = $(sort $(wildcard server/cli/*.c))
SERVICE_SRC = $(sort $(filter-out server/service/main.c,$(wildcard server/service/*.c)))
UNIT_SRC    = $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC   = $(sort $(wildcard tests/bench/*.c))
FUZZ_SRC    = $(sort $(wildcard tests/fuzz/fuzz_*.c))

PLANNER_OBJ = $(PLANNER_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ     = $(CLI_SRC:%.c=$(BUILD)/%.o)
SERVICE_OBJ = $(SERVICE_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN    = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_BIN   = $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
FUZZ_BIN    = $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
LIBPLANNER  = $(BUILD)/libtpuplan.a
LIBSERVICE  = $(BUILD)/libservice.a

SAN_OPT   = -O1 -g -fno-omit-frame-pointer
SAN_FLAGS = -fsanitize=address,undefined -fno-sanitize-recover=undefined

.PHONY: all unit bench-bins fuzz-bins fuzz deps image test test-unit lint format format-check run stop bench \
        bench-pack bench-server soak clean

all: $(BINDIR)/tpuplan $(if $(wildcard server/service/main.c),$(BINDIR)/tpuplan-server)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIBPLANNER): $(PLANNER_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(LIBSERVICE): $(SERVICE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

$(BINDIR)/tpuplan: $(CLI_OBJ) $(LIBPLANNER)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIBPLANNER) $(LDLIBS)

$(BINDIR)/tpuplan-server: $(BUILD)/server/service/main.o $(LIBSERVICE) $(LIBPLANNER)
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIBSERVICE) $(LIBPLANNER)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -Itests/unit -o $@ $< $(LIBSERVICE) $(LIBPLANNER) -lcmocka $(LDLIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIBPLANNER)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBPLANNER) $(LDLIBS)

$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIBSERVICE) $(LIBPLANNER)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -o $@ $< $(LIBSERVICE) $(LIBPLANNER) $(LDLIBS)

unit: $(UNIT_BIN)
bench-bins: $(BENCH_BIN)
fuzz-bins: $(FUZZ_BIN)

# libFuzzer targets (clang), instrumented planner and service parsers. Each target runs
# FUZZ_RUNS executions or FUZZ_SECONDS, whichever ends first (0: no limit of that kind);
# make test runs each for 15 s instead. Report: build/fuzz/report.txt.
FUZZ_RUNS ?= 10000000
FUZZ_SECONDS ?= 0
FUZZ_MAKE = CC=clang BUILD=build/fuzz BINDIR=build/fuzz/bin OPT="-O1 -g" \
	SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
fuzz:
	@$(MAKE) --no-print-directory -j"$$(nproc)" $(FUZZ_MAKE) fuzz-bins
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_RUNS)

# Installs missing Debian packages (as root; prints the command otherwise). Idempotent.
deps:
	@server/scripts/deps.sh $(DEPS_PROFILE)

# Everything: unit tests plain and under ASan+UBSan, CLI, integration and browser suites,
# and a short libFuzzer run of each fuzz target. The benchmarks are built (not run) so that
# they keep compiling. tests/run.sh ends with the line "N passed, N failed".
# The container image for real: podman builds docker/Dockerfile, runs it against a throwaway
# PostgreSQL and checks it over HTTP (tests/image.sh). Not part of `make test`: it needs
# podman and, the first time, minutes to make a Debian base image with debootstrap.
image: all
	@server/scripts/deps.sh image
	@tests/image.sh

test:
	@server/scripts/deps.sh test
	@$(MAKE) --no-print-directory -j"$$(nproc)" all unit bench-bins
	@$(MAKE) --no-print-directory -j"$$(nproc)" BUILD=build/asan BINDIR=build/asan/bin OPT="$(SAN_OPT)" \
		SAN="$(SAN_FLAGS)" all unit
	@$(MAKE) --no-print-directory -j"$$(nproc)" $(FUZZ_MAKE) fuzz-bins
	@tests/run.sh

# Unit tests only (both builds), for a quick loop.
test-unit:
	@$(MAKE) --no-print-directory -j"$$(nproc)" all unit
	@$(MAKE) --no-print-directory -j"$$(nproc)" BUILD=build/asan BINDIR=build/asan/bin OPT="$(SAN_OPT)" \
		SAN="$(SAN_FLAGS)" all unit
	@TPUPLAN_SUITES="unit unit-asan" tests/run.sh

C_FILES = $(shell git ls-files '*.c' '*.h' 2>/dev/null)

format:
	clang-format -i $(C_FILES)

# An empty list (no git, or not a checkout) would make lint pass while checking nothing.
format-check:
	$(if $(C_FILES),,$(error no C files listed: is git installed and is this a checkout?))
	clang-format --dry-run -Werror $(C_FILES)

lint: format-check
	server/scripts/wings.sh
	printf '%s\n' $(filter %.c,$(C_FILES)) | xargs -P "$$(nproc)" -I{} clang-tidy --quiet {} -- \
		-std=c11 -D_GNU_SOURCE -Iserver -Itests/unit $(PKG_CFLAGS)
	cppcheck --quiet --error-exitcode=1 --std=c11 --enable=warning,performance,portability \
		--inline-suppr --suppress=missingIncludeSystem -D_GNU_SOURCE -Iserver server tests/unit

run:
	@server/scripts/deps.sh run
	@$(MAKE) --no-print-directory -j"$$(nproc)" all
	@server/scripts/run.sh start

stop:
	@server/scripts/run.sh stop

bench:
	@server/scripts/deps.sh bench
	@$(MAKE) --no-print-directory -j"$$(nproc)" all bench-bins
	@tests/bench/run.sh layout

bench-pack:
	@server/scripts/deps.sh build
	@$(MAKE) --no-print-directory -j"$$(nproc)" all bench-bins
	@tests/bench/run.sh pack

bench-server:
	@server/scripts/deps.sh bench
	@$(MAKE) --no-print-directory -j"$$(nproc)" all
	@tests/bench/run.sh server

# Loopback only, stops by itself; report in build/soak/report.txt (tests/soak/soak.sh).
SOAK_SECONDS ?= 600
soak:
	@server/scripts/deps.sh soak
	@$(MAKE) --no-print-directory -j"$$(nproc)" all
	@SOAK_SECONDS=$(SOAK_SECONDS) tests/soak/soak.sh

clean:
	rm -rf build bin

-include $(shell find build -name '*.d' -type f 2>/dev/null)

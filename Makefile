# softdpu — the two commands of the README, plus benchmarks and install.
BUILD ?= build
SAN_BUILD ?= build-san
# The benchmarks measure a release build in a directory of their own, whatever
# make demo / make test left in $(BUILD) (debugoptimized). A BUILD=<dir> given
# to make bench is used instead: configured as release when it does not exist,
# refused when it is of another build type (tools/bench-setup.sh --refuse), as
# it may be the directory of make test, whose assertions release turns off.
BENCH_BUILD ?= build-bench
ifneq ($(filter command environment,$(origin BUILD)),)
BENCH_DIR := $(BUILD)
BENCH_SETUP := tools/bench-setup.sh --refuse
else
BENCH_DIR := $(BENCH_BUILD)
BENCH_SETUP := tools/bench-setup.sh
endif
BENCH_ARGS ?=

.PHONY: all demo test test-san bench icount icount-record install clean

all: deps
	@[ -f $(BUILD)/build.ninja ] || meson setup $(BUILD)
	ninja -C $(BUILD)

deps:
	@tools/ensure-deps.sh

demo: all
	@tools/demo.sh $(BUILD)

test: deps
	@tools/run-tests.sh $(BUILD)

test-san: deps
	@tools/run-tests.sh $(SAN_BUILD) sanitize

# BENCH_ARGS=--quick: a smoke run of a few seconds.
bench:
	@tools/ensure-deps.sh bench
	@$(BENCH_SETUP) $(BENCH_DIR)
	ninja -C $(BENCH_DIR)
	@bench/run.sh $(BENCH_DIR) $(BENCH_ARGS)

# Instructions per operation of the small-message paths (callgrind) against
# bench/icount.ref; icount-record rewrites the reference file.
icount:
	@tools/ensure-deps.sh bench
	@$(BENCH_SETUP) $(BENCH_DIR)
	@bench/icount.sh $(BENCH_DIR)

icount-record:
	@tools/ensure-deps.sh bench
	@$(BENCH_SETUP) $(BENCH_DIR)
	@bench/icount.sh $(BENCH_DIR) --record

install: all
	meson install -C $(BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(BENCH_BUILD)

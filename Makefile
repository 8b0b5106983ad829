# softdpu — the two commands of the README, plus benchmarks and install.
BUILD ?= build
SAN_BUILD ?= build-san
BENCH_ARGS ?=

.PHONY: all demo test test-san bench install clean

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
	@tools/bench-setup.sh $(BUILD)
	ninja -C $(BUILD)
	@bench/run.sh $(BUILD) $(BENCH_ARGS)

install: all
	meson install -C $(BUILD)

clean:
	rm -rf $(BUILD) $(SAN_BUILD)

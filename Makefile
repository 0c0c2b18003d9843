# eddy: the two commands a newcomer types, and a few more.
#   make demo   install what is missing, build Release, run the default scene into out/
#   make test   install what is missing, build, run the whole test suite (ctest)
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all deps build demo test bench clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(BUILD)/bin/eddy run --out out

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	$(BUILD)/bin/eddy-bench --benchmark_counters_tabular=true

clean:
	rm -rf $(BUILD) out

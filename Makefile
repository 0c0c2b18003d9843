# eddy: the two commands a newcomer types, and a few more.
#   make demo   install what is missing, build Release, run the default scene into out/
#   make test   install what is missing, build, run the whole test suite (ctest)
#   make web    eddy in the browser: the WebAssembly build and its page in build-web/ (make serve-web serves it)
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: record-hashes all deps build demo test test-under-load bench web serve-web fuzz fuzz-ci fuzz-long sanitize asan tsan clean

all: build

deps:
	@bash scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS)

# Only the command-line tool: the tests, benchmarks and viewer are built by `make build` / `make test`.
demo: deps $(BUILD)/CMakeCache.txt
	@cmake --build $(BUILD) -j $(JOBS) --target eddy_cli
	$(BUILD)/bin/eddy run --out out

# The suite includes the page in a real browser (ctest -L web): `make web` first (skipped, with a message,
# where Emscripten is missing; the web tests then skip too).
test: build web
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The whole suite UNDER_LOAD_RUNS times with every core kept busy beside it (docs/testing.md, "Under load"):
# no test may depend on the machine's speed. Not part of `make test` (each run is a whole suite).
UNDER_LOAD_RUNS ?= 3
test-under-load: build web
	@bash scripts/test-under-load.sh $(BUILD) $(UNDER_LOAD_RUNS)

# Every bundled scene's bits (ctest: scenes.hashes, tests/regression/scene_hashes_test.py) recorded again for
# this kind of CPU, on 1 and 2 threads: only for a change that means to move them (say so in its commit).
record-hashes: build
	/usr/bin/python3 tests/regression/scene_hashes_test.py $(BUILD)/bin/eddy scenes tests/data/scene_hashes.json --record

# eddy in the browser (docs/web.md): the library compiled to WebAssembly and its page, in $(WEB_BUILD)/.
WEB_BUILD ?= build-web
WEB_PORT ?= 8000
web: deps
	@bash scripts/web.sh $(WEB_BUILD) $(JOBS)

# Serves the page on this machine only, cross-origin isolated (the page then runs on threads, docs/web.md):
# open http://127.0.0.1:$(WEB_PORT)/ (Ctrl-C stops it).
serve-web: web
	@/usr/bin/python3 scripts/serve-web.py $(WEB_BUILD) $(WEB_PORT)

bench: build
	$(BUILD)/bin/eddy-bench --benchmark_counters_tabular=true

# Fuzzing (docs/fuzzing.md): libFuzzer + ASan + UBSan with clang, FUZZ_SECONDS per target (or FUZZ_RUNS
# executions per target when set: make fuzz-long), starting from fuzz/corpus; an input that crashes is written
# to fuzz/regressions/<target>/ (replayed by ctest from then on). One target: make fuzz FUZZ_TARGETS=page.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_RUNS ?=
FUZZ_LIMIT = $(if $(FUZZ_RUNS),-runs=$(FUZZ_RUNS),-max_total_time=$(FUZZ_SECONDS))
FUZZ_TARGETS = scene flow set expression read_csv read_vtp read_ply heightmap checkpoint model_obj model_stl model_ply model_gltf page
fuzz:
	@bash scripts/install-deps.sh clang  # libFuzzer and the sanitizer runtimes come with Debian's clang
	@cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DEDDY_FUZZ=ON -DEDDY_PYTHON=OFF -DEDDY_BUILD_TESTS=OFF -DEDDY_BUILD_BENCH=OFF -DEDDY_BUILD_VIEWER=OFF -DEDDY_NATIVE=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))
	@set -e; for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FUZZ_BUILD)/corpus/$$t; \
	  echo "fuzz_$$t: $(if $(FUZZ_RUNS),$(FUZZ_RUNS) executions,$(FUZZ_SECONDS) s)"; \
	  ASAN_OPTIONS=detect_leaks=0 $(FUZZ_BUILD)/fuzz/fuzz_$$t $(FUZZ_LIMIT) -timeout=10 -rss_limit_mb=2048 \
	    -max_len=65536 -print_final_stats=1 -artifact_prefix=fuzz/regressions/$$t/ \
	    $(FUZZ_BUILD)/corpus/$$t fuzz/corpus/$$t 2>&1 | grep -E "^(#[0-9]+ *DONE|stat::number_of_executed_units|==[0-9]+==ERROR|SUMMARY)" || true; \
	  if ls fuzz/regressions/$$t/crash-* fuzz/regressions/$$t/timeout-* fuzz/regressions/$$t/oom-* >/dev/null 2>&1; then \
	    echo "fuzz_$$t found a crash: see fuzz/regressions/$$t/"; exit 1; fi; \
	done

# The bounded slice CI runs after the suite: every fuzz target for FUZZ_CI_SECONDS (10 s each, about
# 140 s for the 14 targets, plus the instrumented build).
FUZZ_CI_SECONDS ?= 10
fuzz-ci:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=$(FUZZ_CI_SECONDS) FUZZ_RUNS=

# The long run (issue 45: 10^6 executions each): every fuzz target for FUZZ_LONG_RUNS executions, one after
# the other; hours in all on 2 cores (docs/fuzzing.md). One target: make fuzz-long FUZZ_TARGETS=page.
FUZZ_LONG_RUNS ?= 1000000
fuzz-long:
	@$(MAKE) --no-print-directory fuzz FUZZ_RUNS=$(FUZZ_LONG_RUNS)

# `make sanitize`: both sanitizer runs below (docs/fuzzing.md).
sanitize: asan tsan

# AddressSanitizer + UndefinedBehaviorSanitizer over the unit, regression and fuzz-replay tests
# (SANITIZE_LABELS="unit|regression|validation|fuzz|viewer" for everything; the viewer's Mesa leak at exit
# is suppressed by tests/asan.supp).
SANITIZE_BUILD ?= build-asan
SANITIZE_LABELS ?= unit|regression|fuzz
asan: deps
	@cmake -S . -B $(SANITIZE_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDDY_BUILD_BENCH=OFF -DEDDY_PYTHON=OFF -DEDDY_NATIVE=OFF \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
	@cmake --build $(SANITIZE_BUILD) -j $(JOBS)
	cd $(SANITIZE_BUILD) && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/asan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS) -L "$(SANITIZE_LABELS)"

# ThreadSanitizer over the multi-threaded solvers, the neighbour search and the wavefront sweep, against
# a oneTBB built with -fsanitize=thread from Debian's source of the installed libtbb-dev (scripts/tsan.sh).
TSAN_BUILD ?= build-tsan
tsan: deps
	@bash scripts/tsan.sh $(TSAN_BUILD) $(JOBS)

clean:
	rm -rf $(BUILD) $(WEB_BUILD) $(FUZZ_BUILD) $(SANITIZE_BUILD) $(TSAN_BUILD) out

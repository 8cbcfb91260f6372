#!/usr/bin/env bash
# Builds ndx and runs every test: the release build under CTest, then the whole suite again
# built with AddressSanitizer and UndefinedBehaviorSanitizer (any report fails the run).
# docs/testing.md says what each stage runs and at which size.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test
jobs=$(nproc)
# Each stage prints the seconds since the start, so a slow stage shows in the log.
stage() { echo "== $* (at ${SECONDS} s)"; }

# The sanitizer and fuzz builds and the valgrind run go on in the background, one after another,
# at the lowest priority (nice 19): they take the CPU the stages in front leave idle (pytest on
# one core, the last tests of a ctest run) and each stage waits for the build it needs. Their
# output goes to build-logs/STEP.log; STEP.ok or STEP.failed marks the end of each.
logs=build-logs
rm -rf "$logs" && mkdir -p "$logs"
background_step() {  # NAME COMMAND...
  if "${@:2}" >"$logs/$1.log" 2>&1 </dev/null; then touch "$logs/$1.ok"; else touch "$logs/$1.failed"; fi
}
wait_for() {  # NAME [show]: waits for a background step; fails the run if it failed, showing
               # the end of its log (with show: the whole log, either way)
  while [ ! -e "$logs/$1.ok" ] && [ ! -e "$logs/$1.failed" ]; do sleep 1; done
  [ "${2:-}" != show ] || cat "$logs/$1.log"
  if [ -e "$logs/$1.failed" ]; then
    echo "$1 failed ($logs/$1.log)" >&2
    [ "${2:-}" = show ] || tail -80 "$logs/$1.log" >&2
    return 1
  fi
}
sanitizer_build() {  # DIR SANITIZERS TOOLS: a RelWithDebInfo tree built with those sanitizers
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNDX_SANITIZE="$2" \
    -DNDX_BUILD_TESTS=ON -DNDX_BUILD_TOOLS="$3" >/dev/null
  cmake --build "$1" -j"$jobs" >/dev/null
}
# Under the sanitizers and valgrind the few C tests whose randomized sweeps are sized for the
# release build run a smaller sweep that still takes every path (tests/support/ndx_test.h,
# test_reduced), and the CLI graph cross-check a fixed sample of its calls; the release build
# runs them whole.
reduced="NDX_TEST_REDUCED=1"

# The documents first (seconds): the HTML reference of the headers, the manual page and every
# relative link of the Markdown files, warnings as errors.
stage "documents: scripts/docs.sh"
bash scripts/docs.sh

stage "release build: all tests"
# Tests and tools are asked for explicitly: scripts/demo.sh configures the same build/ without
# tests, and CMake would keep that cached choice. No tests at all is a failure, not a pass.
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DNDX_BUILD_TESTS=ON -DNDX_BUILD_TOOLS=ON >/dev/null
cmake --build build -j"$jobs" >/dev/null

# Valgrind memcheck over the release build's C test programs (uninstrumented code: catches what
# the sanitizer build cannot, e.g. uninitialised reads), as many programs at a time as cores: a
# new one starts as soon as any finishes, so one slow program does not hold a core idle, and the
# slowest (by the release run's timings, CTest's cost data) start first. Each line gives the
# program's seconds; it runs in the background, so the seconds include time spent waiting.
vg_one() {
  local t=$1 start=$SECONDS
  if env $reduced CMOCKA_MESSAGE_OUTPUT=stdout valgrind -q --error-exitcode=1 --leak-check=full \
      --errors-for-leak-kinds=definite,possible --suppressions=scripts/valgrind.supp \
      "$t" >"$t.valgrind.log" 2>&1; then
    echo "valgrind: $(basename "$t") clean ($((SECONDS - start)) s)"
  else
    echo "valgrind: $(basename "$t") FAILED"
    grep -E '^==[0-9]+==|FAILED|ERROR' "$t.valgrind.log" | head -60
    return 1
  fi
}
vg_slowest_first() {
  local costs=build/Testing/Temporary/CTestCostData.txt t cost
  for t in build/tests/test_*; do
    [ -x "$t" ] || continue
    cost=$(awk -v n="$(basename "$t")" 'NF == 3 && $1 == n { print $3 }' "$costs" 2>/dev/null)
    echo "${cost:-0} $t"
  done | sort -rn | cut -d' ' -f2
}
vg_all() {
  local vg_pass=0 vg_fail=0 running=0 t
  vg_reap() {  # waits for whichever program finishes first and counts it
    if wait -n; then vg_pass=$((vg_pass + 1)); else vg_fail=$((vg_fail + 1)); fi
    running=$((running - 1))
  }
  for t in $(vg_slowest_first); do
    vg_one "$t" &
    running=$((running + 1))
    [ "$running" -lt "$jobs" ] || vg_reap
  done
  while [ "$running" -gt 0 ]; do vg_reap; done
  echo "valgrind: $vg_pass passed, $vg_fail failed"
  [ "$vg_fail" -eq 0 ] && [ "$vg_pass" -gt 0 ]
}

# The background steps, in the order the stages below need them. set -m gives them a process
# group of their own, which the exit trap ends if a stage in front fails.
set -m
(
  renice -n 19 -p "$BASHPID" >/dev/null || true
  background_step asan-build sanitizer_build build-asan address,undefined ON
  background_step tsan-build sanitizer_build build-tsan thread OFF
  background_step fuzz-build env NDX_FUZZ_BUILD_ONLY=1 bash fuzz/run
  while [ ! -e "$logs/release-tests.ok" ]; do sleep 1; done  # valgrind orders by their timings
  background_step valgrind vg_all
) &
background=$!
set +m
trap 'kill -- -"$background" 2>/dev/null || true' EXIT

ctest --test-dir build --output-on-failure --no-tests=error -j"$jobs"
touch "$logs/release-tests.ok"

# The Python module, as a user installs it: pip into a venv over Debian's NumPy (no package index),
# then pytest from outside the source tree so the installed module is the one imported; once more
# with CPython's debug allocator and dev-mode checks (misused references and buffers show there).
stage "Python module: pip install into a venv, pytest"
rm -rf build-py && /usr/bin/python3 -m venv --system-site-packages build-py/venv
build-py/venv/bin/pip install --quiet --no-build-isolation --no-index ./python
(cd build-py && venv/bin/python -m pytest -q -p no:cacheprovider ../tests/python)
(cd build-py && PYTHONMALLOC=debug venv/bin/python -X dev -m pytest -q -p no:cacheprovider \
  -W error::ResourceWarning ../tests/python -k "not reference_counts")

stage "AddressSanitizer + UndefinedBehaviorSanitizer build: all tests"
wait_for asan-build
env $reduced ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure --no-tests=error -j"$jobs"

# Every C test under ThreadSanitizer: ndx's threads are its own (src/core/pool.c, pthreads), so
# parallel ops are checked too. tests/tsan.supp names the races two tests make on purpose
# (threads rewriting indices while a call reads them); die_after_fork=0 lets test_pool's forked
# child start threads.
stage "ThreadSanitizer: all C tests"
wait_for tsan-build
env $reduced TSAN_OPTIONS="halt_on_error=1:die_after_fork=0:suppressions=$PWD/tests/tsan.supp" \
  ctest --test-dir build-tsan --output-on-failure --no-tests=error -j"$jobs"

# Fuzzing: every libFuzzer harness (clang, ASan + UBSan) for a short fixed time on its seed corpus;
# any finding fails the run (fuzz/run leaves the input in build-fuzz/artifacts/). The long runs
# are `fuzz/run 600`. The harnesses were built in the background; fuzz/run finds them up to date.
stage "libFuzzer: ${NDX_CI_FUZZ_SECONDS:-10} s per harness"
wait_for fuzz-build
NDX_FUZZ_JOBS=$jobs bash fuzz/run "${NDX_CI_FUZZ_SECONDS:-10}"

# Valgrind (vg_all above) ran in the background since the fuzz build ended.
stage "valgrind memcheck: release C test programs"
wait_for valgrind show
echo "== every stage passed in ${SECONDS} s"

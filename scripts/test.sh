#!/usr/bin/env bash
# Builds tiersim and runs the whole test suite twice: an optimised build, then a build under
# AddressSanitizer and UndefinedBehaviorSanitizer. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# shellcheck source=scripts/generator.sh
source scripts/generator.sh

jobs=$(nproc)
# ccache (installed by install-deps.sh) keeps compiled objects between runs on the same machine,
# across clones: a second run after a small change rebuilds only what changed in both trees.
launcher=()
if command -v ccache >/dev/null 2>&1 && [[ "${TIERSIM_NO_CCACHE:-0}" != 1 ]]; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # Paths below the clone's parent are hashed relative to it, so another clone hits the same cache.
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(cd .. && pwd)}
  # The sanitizer build's -g1 would otherwise hash the build folder's path into every object.
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros,include_file_mtime,include_file_ctime}
fi
cmake -S . -B build $(generator_args build) -DCMAKE_BUILD_TYPE=Release -DTIERSIM_BENCH=ON "${launcher[@]}" >/dev/null
cmake --build build -j"$jobs"
(cd build && ctest --output-on-failure -j"$jobs")

if [[ "${TIERSIM_SKIP_SANITIZERS:-0}" != 1 ]]; then
  cmake -S . -B build-asan $(generator_args build-asan) -DCMAKE_BUILD_TYPE=Debug -DTIERSIM_SANITIZE=ON -DTIERSIM_BENCH=OFF \
    -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" -DTIERSIM_FUZZ_SECONDS=20 "${launcher[@]}" >/dev/null
  # The program, the test binary and the fuzz targets only: benchmarks do not run under the
  # sanitizers. Each fuzz test mutates its inputs for 20 s there (tests/fuzz/README.md): CI must
  # stay under 12 minutes on two cores; hour-long campaigns are run by hand (the README there).
  cmake --build build-asan -j"$jobs" --target tiersim tiersim_tests tiersim_fuzz_config tiersim_fuzz_files
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure -j"$jobs")
fi

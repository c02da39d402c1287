#!/usr/bin/env bash
# Sourced by scripts/test.sh and scripts/demo.sh: `generator_args BUILD_DIR` prints the CMake
# generator option for a build folder. Ninja (Debian's ninja-build) when the folder is new: it keeps
# both cores compiling across library boundaries, where Make's per-target steps leave one core
# idle behind each library's last unity file; nothing for a folder already configured, whose
# generator CMake will not change.
generator_args() {
  local dir=$1
  if [[ ! -f $dir/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1; then
    echo "-GNinja"
  fi
}

#!/usr/bin/env bash
# Installs the Debian 12 packages tiersim builds, tests and reports with. Installs only what is
# missing, so a second run is quick; needs root (or sudo) for apt-get.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libeigen3-dev libboost-program-options-dev libyaml-cpp-dev libsqlite3-dev sqlite3
  liburing-dev nlohmann-json3-dev catch2 libbenchmark-dev
  libopenmpi-dev openmpi-bin
  fio chromium
  python3-dev pybind11-dev
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "tiersim: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

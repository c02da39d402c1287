#!/usr/bin/env bash
# The main job: build tiersim, check it against the published measurements, simulate the default
# comparison (OPT-30B on six L40S vs one L40S streaming from DRAM or a Gen5 drive), and write the
# report to out/report/index.html (plus report.md and metrics.csv beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
# shellcheck source=scripts/generator.sh
source scripts/generator.sh

cmake -S . -B build $(generator_args build) -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
mkdir -p out
rm -f out/tiersim-results.db out/tiersim-results.db-wal out/tiersim-results.db-shm
./build/app/tiersim validate
./build/app/tiersim compare scenarios/cost/opt30b-l40s.yaml --db out/tiersim-results.db
# --force: out/report is the demo's own folder, and one written before tiersim kept a list of its
# outputs (.tiersim-outputs) would otherwise be refused.
./build/app/tiersim report --db out/tiersim-results.db --out out/report --force
echo
echo "report: out/report/index.html (open it in a browser; it works offline)"

#!/usr/bin/env bash
# Prints a digest of everything a sweep stored, independent of run ids and timestamps, so two
# builds can be compared point by point (issue 29: a 10,000-point sweep must give identical
# results before and after a behaviour-preserving change):
#   tiersim sweep bench/sweep-10k.yaml --db a.db -q && bash bench/sweep-10k-digest.sh a.db
#   (same with the other build into b.db), then diff the two outputs.
set -euo pipefail
db=${1:?usage: sweep-10k-digest.sh RESULTS.db}
sqlite3 -separator ' ' "$db" \
  "SELECT r.scenario_hash, r.fits, ifnull(r.shortfall,''), ifnull(r.bottleneck,''), m.name, quote(m.value), ifnull(m.unit,'')
     FROM runs r LEFT JOIN metrics m ON m.run_id = r.id ORDER BY r.scenario_hash, m.name;
   SELECT 'failure', point, ifnull(scenario_hash,''), reason FROM sweep_failures ORDER BY point;
   SELECT 'memory', r.scenario_hash, mm.* FROM memory mm JOIN runs r ON r.id = mm.run_id ORDER BY r.scenario_hash;
   SELECT 'util', r.scenario_hash, u.* FROM utilization u JOIN runs r ON r.id = u.run_id ORDER BY r.scenario_hash;" \
  | sed -E 's/^(memory|util) ([0-9a-f]+) [0-9]+ /\1 \2 /'

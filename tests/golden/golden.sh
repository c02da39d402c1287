#!/usr/bin/env bash
# Golden-output test: every shipped scenario, comparison, sweep, plan and `tiersim validate` must
# give the same output, byte for byte, as the files under tests/golden/expected/. It guards
# refactorings that must not change behaviour (issue: one workload interface, typed resources).
#
#   golden.sh TIERSIM SOURCE_DIR            compare (exit 1 and a diff on any change)
#   golden.sh TIERSIM SOURCE_DIR --update   rewrite the expected files after an intended change
#
# Runs from SOURCE_DIR so every path in the output is relative and the same on every machine.
#
# With TIERSIM_SANITIZED=1 (set by CTest in the AddressSanitizer build) the serving plans, the
# multi-turn capacity searches and the KV tier sweep are left out and their expected files are not
# compared: the serving plan simulates 10,000 requests at each of many rates, 78 s under ASan
# against 2 s in Release, and the Release run of this test checks their output. So are the
# `run` outputs of the reference scenarios (scenarios/reference/, 233 of them, about 35 s of CPU
# under ASan): `validate` below loads and simulates every one of them in the same build, and
# `run --json` formats the other folders' scenarios. Everything else runs in both builds.
set -euo pipefail
bin=$1
src=$2
mode=${3:-check}
sanitized=${TIERSIM_SANITIZED:-0}
cd "$src"
export TIERSIM_DATA_DIR="$src/scenarios"
out=$(mktemp -d)
scratch=$(mktemp -d)
trap 'rm -rf "$out" "$scratch"' EXIT

# One output file per command; the name says what produced it.
capture() {  # NAME CMD...
  local name=$1
  shift
  local rc=0
  "$@" >"$out/$name" 2>&1 || rc=$?
  echo "exit $rc" >>"$out/$name"
}

# The commands are independent (each writes its own output file and its own scratch database), so
# they run side by side, one per core: the test is the longest in CI and otherwise runs on one core
# while the other idles. TIERSIM_GOLDEN_JOBS=1 runs them one at a time.
max_jobs=${TIERSIM_GOLDEN_JOBS:-$(nproc)}
spawn() {  # FUNCTION ARGS...: run in the background once fewer than max_jobs are running
  while (($(jobs -rp | wc -l) >= max_jobs)); do wait -n || true; done
  "$@" &
}

for f in $(find scenarios/inference scenarios/reference scenarios/serving scenarios/training -name '*.yaml' | sort) \
  scenarios/plans/opt66b-base.yaml scenarios/plans/llama3-70b-rent-base.yaml \
  scenarios/sweeps/llama3-70b-h200-base.yaml; do
  [[ $sanitized == 1 && $f == scenarios/reference/* ]] && continue
  spawn capture "run--$(echo "${f#scenarios/}" | tr / _).json" "$bin" run "$f" --json
done
for f in $(find scenarios/cost -name '*.yaml' | sort); do
  spawn capture "compare--$(basename "$f").json" "$bin" compare "$f" --json
done
for f in scenarios/training/dgx2-zero3.yaml scenarios/training/dgx2-zero-offload.yaml \
  scenarios/training/dgx2-zero-infinity-cpu.yaml scenarios/training/dgx2-zero-infinity.yaml; do
  spawn capture "capacity--$(basename "$f").txt" "$bin" capacity "$f"
done
# Serving capacity searches (every rate tried, the capacity and its cost per served request).
# Under the sanitizers the multi-turn and coding-agent ones are left out (thousands of
# requests at each of about ten rates: 27 s of the test's 118 s of CPU there for the multi-turn
# ones); their runs above and the other searches still take the same code through
# AddressSanitizer.
for f in $(find scenarios/serving -name '*.yaml' | sort); do
  [[ $sanitized == 1 && ( $f == */llama3-70b-multiturn-* || $f == */llama31-70b-agent-* ) ]] && continue
  spawn capture "capacity--$(basename "$f").txt" "$bin" capacity "$f" -q
done
spawn capture validate.json "$bin" validate --json

# Sweeps and plans: every stored point's metrics, read back from the results database in a
# fixed order (the database itself carries timestamps).
sweep_job() {  # SWEEP_FILE: run it into a database of its own, then dump every stored point
  local f=$1 name
  name=$(basename "$f")
  # A folder per sweep, so that side-by-side sweeps do not share a database; the folder is taken
  # out of the output below, where every sweep's database reads SCRATCH/sweep.db.
  mkdir -p "$scratch/sweeps/$name"
  local db="$scratch/sweeps/$name/sweep.db"
  capture "sweep--$name.txt" "$bin" sweep "$f" --db "$db" -q -j 1
  if [[ -f $db ]]; then
    sqlite3 "$db" "SELECT r.scenario_hash, r.scenario_name, r.fits, r.bottleneck, m.name,
                          printf('%.17g', m.value), m.unit
                   FROM runs r JOIN metrics m ON m.run_id = r.id
                   ORDER BY r.scenario_hash, m.name" >>"$out/sweep--$name.txt"
  fi
}
for f in $(find scenarios/sweeps -name '*.yaml' ! -name '*-base.yaml' | sort); do
  # The KV tier sweep (11 multi-turn runs, 14 s under the sanitizers) only in Release, like the
  # multi-turn capacity searches above.
  [[ $sanitized == 1 && $f == *multiturn-kv-tiers* ]] && continue
  spawn sweep_job "$f"
done
plan_dir="$scratch/plan"
# Two threads: a plan's output and files do not depend on the thread count (checked when this
# changed), and the serving plan simulates 10,000 requests per rate, the longest step under ASan.
spawn capture "plan--opt66b-10tps.txt" "$bin" plan scenarios/plans/opt66b-10tps.yaml --out "$plan_dir" -j 2
# The host platform as an axis (issue 33): cost and power only, each host at its DRAM floor.
spawn capture "plan--llama3-70b-fp8-hosts.txt" "$bin" plan scenarios/plans/llama3-70b-fp8-hosts.yaml \
  --out "$scratch/hosts-plan" -j 2
# Rent as the objective (issue 33): the cloud instances of prices.yaml that hold the model.
spawn capture "plan--llama3-70b-rent.txt" "$bin" plan scenarios/plans/llama3-70b-rent.yaml \
  --out "$scratch/rent-plan" -j 2
if [[ $sanitized == 1 && $mode == --update ]]; then
  echo "golden: --update needs every output; unset TIERSIM_SANITIZED" >&2
  exit 2
fi
if [[ $sanitized != 1 ]]; then
  spawn capture "plan--opt30b-chatbot-capacity.txt" "$bin" plan scenarios/plans/opt30b-chatbot-capacity.yaml \
    --out "$scratch/serving-plan" -j 2
  # The KV tier plan (issue 32): 21 capacity searches of 24,000 multi-turn requests each, about
  # 44 s of CPU in Release (the stationary sessions' burn-in included); left out under the sanitizers like the serving plan above.
  spawn capture "plan--llama3-70b-multiturn-kv-tiers.txt" \
    "$bin" plan scenarios/plans/llama3-70b-multiturn-kv-tiers.yaml --out "$scratch/kv-tiers-plan" -j 2
fi
# Every shipped plan runs above: a plan file (one with an objective) that no capture names fails.
for f in scenarios/plans/*.yaml; do
  grep -q '^objective:' "$f" || continue
  grep -qF "plan $f " tests/golden/golden.sh || { echo "golden: $f is shipped but not run here" >&2; exit 1; }
done
wait
# Wall-clock times are the one thing allowed to change.
sed -i -E -e "s#$scratch/sweeps/[^/]+/#SCRATCH/#g" -e "s#$scratch#SCRATCH#g" -e 's/; [0-9.e+-]+ s(;|$)/; T s\1/' "$out"/*
if [[ -d $plan_dir ]]; then
  for p in $(cd "$plan_dir" && find . -type f | sort); do
    { echo "== $p"; cat "$plan_dir/$p"; } >>"$out/plan-files.txt"
  done
fi

if [[ -d $scratch/serving-plan ]]; then
  for p in $(cd "$scratch/serving-plan" && find . -type f | sort); do
    { echo "== $p"; cat "$scratch/serving-plan/$p"; } >>"$out/plan-files--opt30b-chatbot-capacity.txt"
  done
fi

expected="$src/tests/golden/expected"
if [[ $mode == --update ]]; then
  rm -rf "$expected"
  mkdir -p "$expected"
  cp "$out"/* "$expected"/
  echo "golden: wrote $(ls "$expected" | wc -l) files to tests/golden/expected"
  exit 0
fi
skipped=()
if [[ $sanitized == 1 ]]; then
  skipped=(-x plan--opt30b-chatbot-capacity.txt -x plan-files--opt30b-chatbot-capacity.txt
           -x plan--llama3-70b-multiturn-kv-tiers.txt -x 'capacity--llama3-70b-multiturn-*'
           -x 'capacity--llama31-70b-agent-*'
           -x sweep--llama3-70b-multiturn-kv-tiers.yaml.txt -x 'run--reference_*')
fi
if diff -ru "${skipped[@]}" "$expected" "$out" >"$out.diff"; then
  echo "golden: $(ls "$out" | wc -l) outputs unchanged${skipped:+ (the serving plans, multi-turn capacity searches, KV tier sweep and reference runs left out under the sanitizers; validate covers the reference scenarios)}"
  rm -f "$out.diff"
else
  head -c 20000 "$out.diff"
  rm -f "$out.diff"
  echo "golden: outputs differ from tests/golden/expected (rerun with --update only for an intended change)"
  exit 1
fi

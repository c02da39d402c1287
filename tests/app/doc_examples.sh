#!/bin/sh
# Runs every `tiersim sensitivity`, `tiersim breakeven` and `tiersim whatif` example of the docs
# (README.md, reports/README.md, the comments of scenarios/cost/*.yaml) and of the three
# commands' --help, and every `tiersim compare` example of
# compare --help and scenarios/README.md, and every `tiersim plan` example of plan --help and
# scenarios/plans/README.md (without --db, --out in a scratch folder: nothing is left behind),
# and fails when one exits non-zero. An example shown in two places runs once. With
# TIERSIM_SANITIZED=1 (CTest in the AddressSanitizer build) the plan and whatif examples are left
# out: each plan takes 15 s under ASan and the golden test runs the same plan there; each whatif is
# hundreds of simulations (the Micron example 847, about 50 s under ASan) whose code
# tests/study/whatif_test.cpp runs under ASan; the Release run of this test runs them all.
# usage: doc_examples.sh TIERSIM_BINARY SOURCE_DIR
set -eu
bin=${1:?usage: doc_examples.sh TIERSIM_BINARY SOURCE_DIR}
src=${2:?usage: doc_examples.sh TIERSIM_BINARY SOURCE_DIR}
cd "$src"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
  grep -h -E '^[[:space:]]*tiersim (sensitivity|breakeven|whatif) ' README.md reports/README.md
  "$bin" sensitivity --help | grep -E '^[[:space:]]*tiersim sensitivity '
  "$bin" breakeven --help | grep -E '^[[:space:]]*tiersim breakeven '
  "$bin" whatif --help | grep -E '^[[:space:]]*tiersim whatif '
  # the worked examples in the comments of the comparison files ("#   tiersim whatif ...")
  grep -h -E '^#[[:space:]]+tiersim whatif ' scenarios/cost/*.yaml | sed 's/^#//'
  { "$bin" compare --help; grep -o -E '`tiersim compare scenarios/[^`]*`' scenarios/README.md |
      tr -d '`'; } | grep -E '^[[:space:]]*tiersim compare scenarios/' | sed 's/ --db .*//'
  # plan examples write their files into the scratch folder, and no results database
  { "$bin" plan --help; cat scenarios/plans/README.md; } |
    grep -E '^[[:space:]]*tiersim plan scenarios/' |
    sed -e 's/ --db [^ ]*//' -e "s| --out [^ ]*| --out $work/plan-out|"
} | sed 's/^[[:space:]]*tiersim //' | awk '!seen[$0]++' >"$work/examples.all"
if [ "${TIERSIM_SANITIZED:-0}" = 1 ]; then
  grep -v -E '^(plan|whatif) ' "$work/examples.all" >"$work/examples"
else
  cp "$work/examples.all" "$work/examples"
fi
n=$(wc -l <"$work/examples")
[ "$n" -ge 9 ] || { echo "FAIL: found only $n examples"; exit 1; }
i=0
while IFS= read -r args; do
  i=$((i + 1))
  echo "example $i: tiersim $args"
  rc=0
  # shellcheck disable=SC2086  # the example's words, as a shell would split them
  "$bin" $args >"$work/out" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "FAIL: exit status $rc from: tiersim $args"; tail -20 "$work/out"; exit 1
  fi
  tail -3 "$work/out"
done <"$work/examples"
echo "PASS: $i examples"

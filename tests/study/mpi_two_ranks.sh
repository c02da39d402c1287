#!/bin/sh
# `mpirun -np 2 tiersim sweep`: resumes a sweep started by a single process, stores every point
# exactly once, and a second MPI run finds everything stored. Exit 77 (CTest: skipped) when
# mpirun is absent or tiersim was built without MPI.
# usage: mpi_two_ranks.sh TIERSIM_BIN SOURCE_DIR
set -eu
bin=$1
src=$2
command -v mpirun >/dev/null 2>&1 || { echo "mpirun not found: skipped"; exit 77; }
"$bin" sweep --help | grep -q "MPI: enabled" || { echo "tiersim built without MPI: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/results.db
sweep=$src/tests/study/data/mpi-sweep.yaml
mpi="mpirun --allow-run-as-root --oversubscribe -np 2"
# Open MPI's own components keep allocations past MPI_Finalize; under LeakSanitizer the ranks
# would fail on those alone. Leak checking stays on for every other test (and for the plain runs
# below, which do not load MPI components).
mpi="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 $mpi"

# A single process stores 5 points and stops, as if killed.
"$bin" sweep "$sweep" --db "$db" --limit 5 -j 2 -q > "$work/1.txt"
cat "$work/1.txt"
# Two ranks finish the sweep: 24 points, 5 already stored.
$mpi "$bin" sweep "$sweep" --db "$db" -j 2 -q > "$work/2.txt"
cat "$work/2.txt"
grep -q "24 points, 19 simulated, 0 do not fit, 5 already stored, 0 invalid" "$work/2.txt"
# Again: nothing left to do, nothing duplicated.
$mpi "$bin" sweep "$sweep" --db "$db" -j 2 -q > "$work/3.txt"
cat "$work/3.txt"
grep -q "24 points, 0 simulated, 0 do not fit, 24 already stored, 0 invalid" "$work/3.txt"
# And a plain run agrees.
"$bin" sweep "$sweep" --db "$db" -q | grep -q "24 already stored"
# Open MPI lives in tiersim-mpi.so beside the program; a program copied away from it says so
# under a launcher instead of running every point in every rank.
cp "$bin" "$work/tiersim-alone"
if OMPI_COMM_WORLD_SIZE=1 "$work/tiersim-alone" sweep "$sweep" --db "$work/alone.db" -q 2> "$work/alone.txt"; then
  echo "a sweep without its MPI module ran under a launcher"; exit 1
fi
cat "$work/alone.txt"
grep -q "MPI module could not be loaded" "$work/alone.txt"
test ! -e "$work/alone.db"
echo "mpi sweep ok"

"""The tiersim Python module returns what the tiersim program returns.

Run by CTest as: python3 module_test.py TIERSIM_BINARY SOURCE_DIR (PYTHONPATH set to the build's
python/ folder).
"""
import json
import os
import subprocess
import sys
import tempfile

import tiersim

binary, source = sys.argv[1], sys.argv[2]
os.chdir(source)
scenario = "scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml"
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


# 1. A shipped scenario: the same object as `tiersim run --json`, number for number.
cli = json.loads(subprocess.run([binary, "run", scenario, "--json", "--set", "hardware.nvme.count=8"],
                                check=True, capture_output=True, text=True).stdout)
py = tiersim.run(scenario, set={"hardware.nvme.count": 8})
check(py == cli, "run() equals `tiersim run --json` for " + scenario)
check(py["units"]["throughput_tokens_per_s"] == "tokens/s", "units come along")

# 2. A scenario built from a dict gives the same hash as the file it was copied from.
resolved = tiersim.resolve(scenario)
check(len(resolved["hash"]) == 16 and resolved["workload"] == "inference", "resolve() names the hash")
as_dict = {
    "name": "from-a-dict",
    "hardware": {"gpu": {"model": "H200"}},
    "model": {"name": "llama-3-8b"},
    "workload": {"kind": "inference", "batch": 8, "prompt_tokens": 128, "gen_tokens": 8},
}
r = tiersim.run(as_dict)
check(r["fits"] and r["throughput_tokens_per_s"] > 0, "a dict scenario runs")

# 3. Errors are Python exceptions with the file/line/key message.
try:
    tiersim.run(scenario, set={"workload.bacth": 3})
    check(False, "an unknown key raises")
except tiersim.ConfigError as e:
    check("workload.bacth" in str(e) and "workload.batch" in str(e),
          "ConfigError names the key and suggests the near match: " + str(e))
try:
    tiersim.run(dict(as_dict, model={"name": "no-such-model"}))
    check(False, "an unknown model raises")
except tiersim.Error as e:
    check("no-such-model" in str(e), "catalog errors are tiersim.Error: " + str(e))

# 4. compare(): the `tiersim compare --json` object, ratios to the first configuration.
c = tiersim.compare([scenario, "scenarios/inference/llama3-70b-h200-8x-gen5-gds.yaml"])
v = c["variants"]
check(len(v) == 2 and all(x == 1 for x in v[0]["ratios"].values()), "the baseline's ratios are 1")
check(abs(v[1]["ratios"]["throughput_tokens_per_s"]
          - v[1]["metrics"]["throughput_tokens_per_s"] / v[0]["metrics"]["throughput_tokens_per_s"])
      < 1e-12, "ratios are value / baseline")

# 5. sweep() stores into a database; runs() reads it back as flat rows.
with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "r.db")
    s = tiersim.sweep("scenarios/sweeps/llama3-70b-drives.yaml", db=db, threads=1)
    check(s["points"] == 120 and s["simulated"] + s["no_fit"] == 120, "sweep() simulates every point")
    rows = tiersim.runs(db, sweep="llama3-70b-drives")
    check(len(rows) == 120 and all("total_s" in row for row in rows), "runs() returns one row per point")
    again = tiersim.sweep("scenarios/sweeps/llama3-70b-drives.yaml", db=db, threads=1)
    check(again["skipped"] == 120, "a second sweep() resumes: nothing simulated twice")

# 6. set= as one "key=value" string is one override (it was iterated character by character).
check(tiersim.run(scenario, set="hardware.nvme.count=8") == cli, "set= takes one key=value string")
try:
    tiersim.run(scenario, set=b"hardware.nvme.count=8")
    check(False, "set= as bytes raises")
except TypeError as e:
    check("key=value" in str(e), "set= as bytes is a TypeError saying what is expected")

# 7. Ctrl-C stops a long sweep() within moments (the GIL was released and no stop flag polled, so
# KeyboardInterrupt came only after the whole sweep).
with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "r.db")
    sweep_file = os.path.join(tmp, "long.yaml")
    with open(sweep_file, "w") as f:
        f.write("name: long\nbase: %s/scenarios/sweeps/llama3-70b-h200-base.yaml\n"
                "set: {model.layers: 4, workload.gen_tokens: 4}\n"
                "grid:\n  workload.batch: {from: 1, to: 4000, step: 1}\n"
                "  hardware.nvme.count: [1, 2, 4]\n" % source)
    import signal
    import threading
    import time
    threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
    start = time.monotonic()
    try:
        tiersim.sweep(sweep_file, db=db, threads=2)
        check(False, "Ctrl-C interrupts sweep()")
    except KeyboardInterrupt:
        stored = len(tiersim.runs(db, sweep="long"))
        check(stored < 12000, "Ctrl-C interrupts sweep(): %d of 12000 points stored, %.1f s"
              % (stored, time.monotonic() - start))

# 8. Ctrl-C stops one long run() too: the engine polls a stop flag (a single simulation was not
# interruptible before).
long_run = tiersim.run("scenarios/serving/opt30b-chatbot-6xl40s.yaml",
                       set="workload.requests=2000")  # warm: catalogs read, module loaded
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
start = time.monotonic()
try:
    tiersim.run("scenarios/serving/opt30b-chatbot-6xl40s.yaml", set="workload.requests=1000000")
    check(False, "Ctrl-C interrupts run()")
except KeyboardInterrupt:
    took = time.monotonic() - start
    # The whole run takes about 12 s here; stopped, it ends within moments of the signal.
    check(took < 3, "Ctrl-C interrupts one run() within moments: %.1f s" % took)

print("%d passed, %d failed" % (0 if failures else 1, len(failures)))
sys.exit(1 if failures else 0)

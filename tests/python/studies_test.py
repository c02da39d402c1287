"""Every study of the tiersim program is callable from Python and returns what the program prints
with --json: compare (also comparison files and comparison dicts), sweep, plan, capacity
(training and serving), sensitivity, breakeven, whatif, validate, catalog and report. Each case
runs the program and the function on the same small inputs and compares the two objects, number
for number (whatif's wall time aside).

Run by CTest as: python3 studies_test.py TIERSIM_BINARY SOURCE_DIR (PYTHONPATH set to the build's
python/ folder). Prints each case's time.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

import tiersim

binary, source = sys.argv[1], sys.argv[2]
os.chdir(source)
failures = []
tmp = tempfile.mkdtemp()


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures.append(what)


def cli(*args, codes=(0,)):
    """The program's --json object."""
    p = subprocess.run([binary, *args, "--json"], capture_output=True, text=True)
    if p.returncode not in codes:
        raise RuntimeError("tiersim %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return json.loads(p.stdout)


def same(what, cli_args, call, codes=(0,)):
    start = time.monotonic()
    expected = cli(*cli_args, codes=codes)
    got = call()
    check(got == expected, "%s equals `tiersim %s --json` (%.1f s)"
          % (what, " ".join(cli_args), time.monotonic() - start))
    return got


def read(path):
    with open(path, "rb") as f:
        return f.read()


def without_time(text):
    """A report's text without its "generated YYYY-MM-DD HH:MM UTC" (the minute may turn)."""
    return re.sub(rb"generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", b"generated T", text)


cost = "scenarios/cost/opt30b-l40s.yaml"
inference = os.path.abspath("scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml")

# run: a refusal carries the closest configurations that fit, as the program's does.
big = {"workload.batch": 4096, "workload.prompt_tokens": 4096}
r = same("run(does not fit)", ["run", inference] + sum((["--set", "%s=%d" % kv] for kv in big.items()), []),
         lambda: tiersim.run(inference, set=big), codes=(3,))
check(not r["fits"] and r["closest_fits"], "a refusal names the closest configurations that fit")

# compare: a comparison file (the `compare: unknown key` of a scenario loader), with --set.
c = same("compare(comparison file)", ["compare", cost, "--set", "economics.usd_per_kwh=0.2"],
         lambda: tiersim.compare(cost, set={"economics.usd_per_kwh": 0.2}))
check(c["baseline"] == c["variants"][0]["name"] and len(c["variants"]) >= 2,
      "compare() names the baseline and returns every variant")
cost_variants = len(c["variants"])

# compare: a comparison given as a dict is the same comparison written to a file.
comparison = {"compare": {"name": "drives", "baseline": "four", "variants": [
    {"name": "eight", "file": inference, "set": {"hardware.nvme.count": 8}},
    {"name": "four", "file": inference}]}}
compare_file = os.path.join(tmp, "drives.yaml")
with open(compare_file, "w") as f:
    json.dump(comparison, f)  # JSON is YAML
c = same("compare(dict with compare:)", ["compare", compare_file], lambda: tiersim.compare(comparison))
check(c["baseline"] == "four" and c["variants"][1]["ratios"]["throughput_tokens_per_s"] > 1,
      "a comparison dict's baseline goes first; eight drives are faster than four")

# sweep: a small sweep file into two databases.
sweep_file = os.path.join(tmp, "small.yaml")
with open(sweep_file, "w") as f:
    f.write("name: small\nbase: %s/scenarios/sweeps/llama3-70b-h200-base.yaml\n"
            "set: {model.layers: 4, workload.gen_tokens: 4}\n"
            "grid:\n  hardware.nvme.count: [1, 2, 4]\n" % source)
db_cli, db_py = os.path.join(tmp, "cli.db"), os.path.join(tmp, "py.db")
expected = cli("sweep", sweep_file, "--db", db_cli, "-q", "-j", "1")
got = tiersim.sweep(sweep_file, db=db_py, threads=1)
check(dict(got, db=db_cli) == expected and got["db"] == db_py and got["simulated"] == 3,
      "sweep() equals `tiersim sweep --json` (the database aside)")

# plan: the same object, and the same scenario files (written into the same folder in turn).
plan_out = os.path.join(tmp, "plan")
plan_cli = cli("plan", "scenarios/plans/opt66b-10tps.yaml", "--out", plan_out, "-j", "2")
files_cli = {e["file"]: read(e["file"]) for e in plan_cli["best"] + plan_cli.get("pareto", [])}
plan_py = tiersim.plan("scenarios/plans/opt66b-10tps.yaml", out=plan_out, threads=2)
check(plan_py == plan_cli, "plan() equals `tiersim plan --json`")
check(files_cli and all(read(p) == text for p, text in files_cli.items()),
      "plan() writes the same %d scenario files" % len(files_cli))

# capacity: a training scenario (largest model per ZeRO strategy) and a short serving search.
t = same("capacity(training)", ["capacity", "scenarios/training/dgx2-zero3.yaml"],
         lambda: tiersim.capacity("scenarios/training/dgx2-zero3.yaml"))
check(len(t["strategies"]) == 5 and any(s["found"] for s in t["strategies"]),
      "capacity(training) lists the five ZeRO strategies")
serving = "scenarios/serving/opt30b-chatbot-6xl40s.yaml"
s = same("capacity(serving)", ["capacity", serving, "--set", "workload.requests=300",
                               "--tolerance", "0.25", "--attainment", "95", "-q"],
         lambda: tiersim.capacity(serving, set={"workload.requests": 300}, tolerance=0.25,
                                  attainment=95))
check(s["criteria"]["attainment_pct"] == 95 and len(s["points"]) >= 2,
      "capacity(serving) searches rates")

# sensitivity and breakeven on the shipped comparison file.
same("sensitivity()", ["sensitivity", cost, "--variant", "1x-l40s-gen5",
                       "--input", "economics.prices.gpu_usd=0.5:1.5",
                       "--input", "economics.prices.drive_usd", "--range", "0.3"],
     lambda: tiersim.sensitivity(cost, variants="1x-l40s-gen5",
                                 inputs=["economics.prices.gpu_usd=0.5:1.5",
                                         "economics.prices.drive_usd"], range=0.3))
same("breakeven()", ["breakeven", cost, "--variants", "6x-l40s", "1x-l40s-gen5",
                     "--vary", "economics.prices.gpu_usd", "--between", "1000", "40000",
                     "--points", "5"],
     lambda: tiersim.breakeven(cost, vary="economics.prices.gpu_usd", between=(1000, 40000),
                               variants=["6x-l40s", "1x-l40s-gen5"], points=5))

# whatif: a short search with an input in A only, one in B only and B's software stack (a choice
# input), on one thread (with several, two threads may simulate the same point at once and
# `simulations` counts both). The search's wall time is the only field that differs between runs.
whatif_args = ["whatif", cost, "--variants", "1x-l40s-gen5", "6x-l40s",
               "--metric", "usd_per_million_tokens", "--ratio", "0.2",
               "--vary-a", "economics.prices.drive_usd", "--vary-b", "economics.prices.gpu_usd=1:8",
               "--vary-b", "policy.stack", "--points", "5", "--max-points", "120", "-j", "1", "-q"]
start = time.monotonic()
w_cli = cli(*whatif_args)
w_py = tiersim.whatif(cost, ratio=0.2, variants=["1x-l40s-gen5", "6x-l40s"],
                      metric="usd_per_million_tokens", vary_a="economics.prices.drive_usd",
                      vary_b=["economics.prices.gpu_usd=1:8", "policy.stack"], points=5,
                      max_points=120, threads=1)
check(w_cli.pop("wall_s") >= 0 and w_py.pop("wall_s") >= 0 and w_py == w_cli,
      "whatif() equals `tiersim %s --json` but for wall_s (%.1f s)"
      % (" ".join(whatif_args), time.monotonic() - start))
check([i["label"] for i in w_py["inputs"]]
      == ["a:economics.prices.drive_usd", "b:economics.prices.gpu_usd", "b:policy.stack"]
      and len(w_py["choice_outcomes"]) >= 2 and 0 < w_py["points"] <= 120,
      "whatif() searches the inputs given, each stack of B, within max_points")
check(w_py["found"] and w_py["nearest"]["ratio"] >= 0.2,
      "whatif() finds a point reaching the ratio: %s" % (w_py["nearest"] or {}).get("settings_b"))
try:
    tiersim.whatif(cost, ratio=1.2, vary="economics.prices.gpu_usdd")
    check(False, "whatif() with a misspelt key raises")
except tiersim.ConfigError as e:
    check("did you mean 'economics.prices.gpu_usd'?" in str(e),
          "whatif() names the near match of a misspelt key: %s" % e)

# validate: the whole reference set (exit 1 would mean an established group over its limit).
v = same("validate()", ["validate"], lambda: tiersim.validate(), codes=(0, 1))
check(len(v["cases"]) > 10, "validate() returns every case")

# catalog: every kind, and one.
same("catalog()", ["catalog"], lambda: tiersim.catalog())
same("catalog(\"drives\")", ["catalog", "drives"], lambda: tiersim.catalog("drives"))

# report: from a database written by compare(db=); the same object and the same files.
db = os.path.join(tmp, "report.db")
tiersim.compare(cost, db=db)
report_out = os.path.join(tmp, "report")
rep_cli = cli("report", "--db", db, "--out", report_out, "--no-validation")
texts = {k: without_time(read(p)) for k, p in rep_cli["files"].items()}
rep_py = tiersim.report(db, report_out, validation=False)
check(rep_py == rep_cli, "report() equals `tiersim report --json`")
check(all(without_time(read(p)) == texts[k] for k, p in rep_py["files"].items()),
      "report() writes the same index.html, report.md and metrics.csv")
check(rep_py["runs"] == cost_variants and not rep_py["validation"]["available"], "report() counts the runs")

# Errors: the same typed exceptions and messages as the program's.
try:
    tiersim.sensitivity(cost, metric="usd_per_milion_tokens")
    check(False, "a misspelt metric raises")
except tiersim.ConfigError as e:
    check("usd_per_million_tokens" in str(e), "a misspelt metric suggests the near match: %s" % e)
try:
    tiersim.plan("scenarios/plans/opt66b-10tps.yaml", out=compare_file)
    check(False, "plan() into a file raises")
except tiersim.Error as e:
    check(True, "plan() into a file raises tiersim.Error: %s" % e)

foreign = os.path.join(tmp, "foreign")
os.makedirs(foreign)
with open(os.path.join(foreign, "index.html"), "w") as f:
    f.write("not tiersim's")
try:
    tiersim.report(db, foreign, validation=False)
    check(False, "report() refuses to replace a file tiersim did not write")
except tiersim.IoError as e:
    check("force=True" in str(e), "report() refuses a foreign file and names force=True: %s" % e)
check(tiersim.report(db, foreign, validation=False, sensitivity=False, force=True)["runs"]
      == cost_variants, "report(force=True) replaces it")

# Ctrl-C: studies with a long simulation stop within moments (the engine polls the flag).
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
start = time.monotonic()
try:
    tiersim.sensitivity(serving, set={"workload.requests": 1000000},
                        inputs=["economics.prices.gpu_usd"], metric="throughput_tokens_per_s")
    check(False, "Ctrl-C interrupts sensitivity()")
except KeyboardInterrupt:
    took = time.monotonic() - start
    check(took < 3, "Ctrl-C interrupts sensitivity() within moments: %.1f s" % took)

threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
start = time.monotonic()
try:
    tiersim.capacity(serving, set={"workload.requests": 1000000})
    check(False, "Ctrl-C interrupts capacity()")
except KeyboardInterrupt:
    took = time.monotonic() - start
    check(took < 3, "Ctrl-C interrupts capacity() within moments: %.1f s" % took)

threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
start = time.monotonic()
try:
    tiersim.whatif(cost, ratio=100, variants=["1x-l40s-gen5", "6x-l40s"])
    check(False, "Ctrl-C interrupts whatif()")
except KeyboardInterrupt:
    took = time.monotonic() - start
    check(took < 3, "Ctrl-C interrupts whatif() within moments: %.1f s" % took)

print("%d failed" % len(failures))
sys.exit(1 if failures else 0)

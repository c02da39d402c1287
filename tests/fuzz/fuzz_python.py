"""Fuzzes the tiersim Python module's entry points (run, resolve, compare, sweep, runs,
sensitivity, breakeven, capacity).

Each input is a call with random arguments: `set=` as a dict, a list, one "key=value" string,
bytes or another object, with keys from `tiersim schema` or mangled ones and extreme values;
scenario dicts with keys dropped, retyped or set to extreme values; paths that are folders,
devices or missing. A call may fail only with tiersim.Error (a subclass: ConfigError, ...) or
TypeError for an argument of the wrong type; any other exception, a crash or a hang (an input
running past --timeout seconds) is a finding, printed with the call that made it.

    python3 tests/fuzz/fuzz_python.py --seconds 60 --seed 7 SOURCE_DIR

Needs PYTHONPATH=build/python (CTest sets it; tests/CMakeLists.txt).
"""
import argparse
import json
import os
import random
import signal
import sys
import tempfile
import time

import tiersim

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, default=10)
parser.add_argument("--runs", type=int, default=-1)
parser.add_argument("--seed", type=int, default=1)
parser.add_argument("--timeout", type=int, default=30)
parser.add_argument("source")
args = parser.parse_args()
source = os.path.abspath(args.source)
rng = random.Random(args.seed)

SCENARIO = source + "/scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml"
BASE = {
    "name": "fuzz",
    "hardware": {"gpu": {"model": "H200"}},
    "model": {"name": "llama-3-8b"},
    "workload": {"kind": "inference", "batch": 8, "prompt_tokens": 128, "gen_tokens": 4},
}
KEYS = ["workload.batch", "workload.gen_tokens", "workload.prompt_tokens", "hardware.gpu.count",
        "hardware.nvme.count", "hardware.nvme.model", "model.experts", "model.layers",
        "policy.aio.swap_buffers", "policy.aio.block_size", "policy.weights", "workload.kind",
        "workload.requests", "workload.block_tokens", "economics.amortization_years",
        "hardware.host.dram_gb", "workload.trace", "hardware.nvme.profile", "name", "nope.key"]
VALUES = [0, -1, 1, 2, 3, 1e9, 1e308, -1e308, float("nan"), float("inf"), 2**63, 2**64, 0.5,
          "", "x", "nan", "1e999", "16MiB", "0x10", "generic-gen5", "/dev/zero", ".", None, True,
          [], {}, [1, 2], {"gpu": 0.5, "cpu": 0.5}, "\ufeffname", "a" * 10000, "\x00"]


def value():
    return rng.choice(VALUES)


def random_set():
    kind = rng.randrange(6)
    if kind == 0:
        return {rng.choice(KEYS): value() for _ in range(rng.randrange(4))}
    if kind == 1:
        return ["%s=%s" % (rng.choice(KEYS), value()) for _ in range(rng.randrange(4))]
    if kind == 2:
        return "%s=%s" % (rng.choice(KEYS), value())
    if kind == 3:
        return rng.choice([b"workload.batch=8", 7, 1.5, object(), [b"x"], [None], {1: 2}])
    if kind == 4:
        return None
    return rng.choice(KEYS)  # a key without "="


def mutate(d, depth=0):
    d = dict(d)
    for _ in range(rng.randrange(3)):
        op = rng.randrange(4)
        keys = list(d)
        if op == 0 and keys:
            del d[rng.choice(keys)]
        elif op == 1 and keys:
            k = rng.choice(keys)
            d[k] = mutate(d[k], depth + 1) if isinstance(d[k], dict) and depth < 3 else value()
        elif op == 2:
            d[rng.choice(["extra", "hardware", "policy", "workload"])] = value()
        elif keys:
            k = rng.choice(keys)
            d[k + rng.choice(["", "x", "_"])] = d.pop(k)
    return d


def random_scenario():
    kind = rng.randrange(5)
    if kind == 0:
        return SCENARIO
    if kind == 1:
        return mutate(BASE)
    if kind == 2:
        return rng.choice([".", "/dev/null", "/dev/zero", "no-such-file.yaml", "", source])
    if kind == 3:
        return rng.choice([3, None, [], b"x"])
    return dict(BASE)


def call(tmp):
    what = rng.randrange(8)
    if what == 0:
        return "run", (random_scenario(),), {"set": random_set()}
    if what == 1:
        return "resolve", (random_scenario(),), {"set": random_set()}
    if what == 2:
        return "compare", ([random_scenario() for _ in range(rng.randrange(1, 3))],), {"set": random_set()}
    if what == 3:
        db = os.path.join(tmp, "r.db")
        path = rng.choice([".", "/dev/zero", "no-such.yaml", SCENARIO, os.path.join(tmp, "s.yaml")])
        with open(os.path.join(tmp, "s.yaml"), "w") as f:
            f.write("name: s\nbase: %s/scenarios/sweeps/llama3-70b-h200-base.yaml\n"
                    "set: {model.layers: 2, workload.gen_tokens: 2}\ngrid:\n  %s: [%s]\n"
                    % (source, rng.choice(KEYS), json.dumps(value())))
        return "sweep", (path,), {"db": rng.choice([db, ".", "/dev/null"]), "threads": rng.choice([1, 0, -1])}
    if what == 5:
        # One input varied, so that a call stays a few simulations long.
        return "sensitivity", ([random_scenario() for _ in range(rng.randrange(1, 3))],), \
            {"set": random_set(), "inputs": [rng.choice(KEYS + ["economics.prices.gpu_usd"])],
             "range": rng.choice([0.2, 0.5, 0, 1, -1, float("nan")]), "threads": 1,
             "variants": rng.choice([None, "fuzz", ["x"]])}
    if what == 6:
        return "breakeven", ([random_scenario() for _ in range(rng.randrange(1, 4))],), \
            {"vary": rng.choice(KEYS + ["economics.prices.gpu_usd"]), "set": random_set(),
             "points": rng.choice([2, 3, 1, 0]), "between": rng.choice([None, (1, 2), (2, 1), (0, 1e308)]),
             "sense": rng.choice([None, "minimize", "up"])}
    if what == 7:
        scenario = rng.choice([SCENARIO, source + "/scenarios/training/dgx2-zero3.yaml",
                               source + "/scenarios/serving/opt30b-chatbot-6xl40s.yaml",
                               random_scenario()])
        return "capacity", (scenario,), \
            {"set": rng.choice([None, {"workload.requests": 50}, random_set()]),
             "attainment": rng.choice([90, 0, 101, float("nan")]),
             "tolerance": rng.choice([0.2, 0, -1]), "start": rng.choice([0, -1, 1e308]),
             "slo": rng.choice([True, False]), "stability": rng.choice([True, False])}
    return "runs", (rng.choice([os.path.join(tmp, "r.db"), ".", "/dev/zero", "no-such.db"]),), \
        {"sweep": rng.choice([None, "s", 3])}


def on_timeout(signum, frame):
    raise TimeoutError("the call ran past --timeout")


signal.signal(signal.SIGALRM, on_timeout)
# A crash of the process (a signal in the module) leaves no Python exception to print: the call
# about to run is written first to fuzz-python-last-call.txt in the starting folder, so that the
# input that killed it is on disk (as fuzz_config saves its crashing inputs).
last_call = os.path.abspath("fuzz-python-last-call.txt")
start = time.monotonic()
runs = accepted = 0
with tempfile.TemporaryDirectory() as tmp:
    os.chdir(tmp)  # relative paths (and any file a call creates) stay in the scratch folder
    while (runs < args.runs) if args.runs >= 0 else (time.monotonic() - start < args.seconds):
        name, pos, kw = call(tmp)
        runs += 1
        with open(last_call, "w") as f:
            f.write("tiersim.%s(*%r, **%r)\n" % (name, pos, kw))
        signal.alarm(args.timeout)
        try:
            getattr(tiersim, name)(*pos, **kw)
            accepted += 1
        except (tiersim.Error, TypeError):
            pass
        except BaseException as e:  # noqa: B902: every other outcome is the finding
            signal.alarm(0)
            print("tiersim fuzz: finding: tiersim.%s(*%r, **%r) raised %s: %s"
                  % (name, pos, kw, type(e).__name__, str(e)[:2000]), file=sys.stderr)
            sys.exit(1)
        finally:
            signal.alarm(0)
    os.chdir(source)
os.remove(last_call)
elapsed = time.monotonic() - start
print("tiersim fuzz (python): %d calls in %.1f s (%.0f calls/s), %d accepted; seed %d; no findings"
      % (runs, elapsed, runs / elapsed, accepted, args.seed))

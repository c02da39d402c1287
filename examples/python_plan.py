"""What is the cheapest configuration that meets my target? (`tiersim plan` from Python)

    python3 examples/python_plan.py

Searches the shipped plan (OPT-66B at 10 tokens/s or more; scenarios/plans/opt66b-10tps.yaml) and
prints the best configurations and the Pareto front. Each one is also written as a scenario file
(into a temporary folder here) that tiersim.run() reproduces.
"""
import tempfile

import tiersim

with tempfile.TemporaryDirectory() as out:
    result = tiersim.plan("scenarios/plans/opt66b-10tps.yaml", out=out)
    objective = result["objective"]["metric"]
    print("considered %d configurations, simulated %d"
          % (result["stats"]["considered"], result["stats"]["simulated"]))
    for k, best in enumerate(result["best"], 1):
        print("%d. %s: %s = %.4g" % (k, best["label"], objective, best["metrics"][objective]))
    if result["best"]:
        again = tiersim.run(result["best"][0]["file"])  # the written scenario runs as it is
        print("the best file, run again: %.4g tokens/s" % again["throughput_tokens_per_s"])
    for p in result.get("pareto", []):
        print("front:", p["label"], {m: round(p["metrics"][m], 3) for m in result["pareto_metrics"]})

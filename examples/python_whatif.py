"""What would it take for the offload box to come within 5x of six L40S on cost per token?
(`tiersim whatif` from Python)

    python3 examples/python_whatif.py

One L40S streaming OPT-30B from a Gen5 drive against six L40S holding it in GPU memory: searches
the six-GPU box's L40S price (up to 8 times today's), the one-GPU box's drive price and the six-GPU
box's software stack together for the nearest assumptions under which the offload box's cost per
million tokens is at most 5 times the six-GPU box's (a ratio of 0.2), and prints the
`tiersim run --set` settings that reproduce that point; when no point in the ranges gets there,
the best ratio they reach and where.
"""
import tiersim

result = tiersim.whatif("scenarios/cost/opt30b-l40s.yaml", ratio=0.2,
                        variants=["1x-l40s-gen5", "6x-l40s"], metric="usd_per_million_tokens",
                        vary_a="economics.prices.drive_usd",
                        vary_b=["economics.prices.gpu_usd=1:8", "policy.stack"], max_points=300)
given = result["as_given"]
print("as given: %s %.4g, %s %.4g %s: ratio %.3g" % (result["a"], given["metric_a"], result["b"],
                                                     given["metric_b"], result["unit"],
                                                     given["ratio"]))
for entry in result["inputs"]:
    print("  %s alone: %s" % (entry["label"], entry.get("trend") or "(a choice)"))
point = result["nearest"] if result["found"] else result["best"]
print(("reaches %.3g at distance %.3g:" if result["found"]
       else "not reached; the best ratio, %.3g, at distance %.3g:")
      % (point["ratio"], point["distance"]))
for label, factor in point["factors"].items():
    print("  %s x%.3g" % (label, factor))
for label, value in point["choices"].items():
    print("  %s: %s" % (label, value))
print("  settings of %s: %s" % (result["a"], " ".join(point["settings_a"]) or "none"))
print("  settings of %s: %s" % (result["b"], " ".join(point["settings_b"]) or "none"))
print("(%d points, %d simulations)" % (result["points"], result["simulations"]))

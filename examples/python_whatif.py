"""What would it take for the offload box to cost 20 % less per million tokens than six L40S?
(`tiersim whatif` from Python)

    python3 examples/python_whatif.py

Searches the L40S price and the drive price together for the nearest prices at which six L40S
holding OPT-30B in GPU memory cost at least 1.2 times what one L40S streaming it from a Gen5 drive
costs per million tokens, and prints the `tiersim run --set` settings that reproduce that point;
when no prices in the ranges get there, the best ratio they reach and where.
"""
import tiersim

result = tiersim.whatif("scenarios/cost/opt30b-l40s.yaml", ratio=1.2,
                        variants=["1x-l40s-gen5", "6x-l40s"], metric="usd_per_million_tokens",
                        vary=["economics.prices.gpu_usd", "economics.prices.drive_usd"],
                        max_points=300)
given = result["as_given"]
print("as given: %s %.4g, %s %.4g %s: ratio %.3g" % (result["a"], given["metric_a"], result["b"],
                                                     given["metric_b"], result["unit"],
                                                     given["ratio"]))
for entry in result["inputs"]:
    print("  %s alone: %s" % (entry["label"], entry["trend"] or "-"))
point = result["nearest"] if result["found"] else result["best"]
print(("reaches %.3g at:" if result["found"] else "not reached; the best ratio, %.3g, at:")
      % point["ratio"])
for label, factor in point["factors"].items():
    print("  %s x%.3g" % (label, factor))
print("  settings of %s: %s" % (result["a"], " ".join(point["settings_a"]) or "none"))
print("  settings of %s: %s" % (result["b"], " ".join(point["settings_b"]) or "none"))
print("(%d points, %d simulations)" % (result["points"], result["simulations"]))

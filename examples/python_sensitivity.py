"""Which uncertain input decides the answer? (`tiersim sensitivity` from Python)

    python3 examples/python_sensitivity.py

The tornado table of one L40S streaming OPT-30B from a Gen5 drive: each price, rate and bandwidth
moved alone by +-20 %, the cost per million tokens re-simulated at both ends, largest swing first.
"""
import tiersim

result = tiersim.sensitivity("scenarios/cost/opt30b-l40s.yaml", variants="1x-l40s-gen5")
for config in result["configurations"]:
    print("%s: %s = %.4g %s" % (config["variant"], config["metric"], config["base"], config["unit"]))
    for row in config["inputs"][:5]:
        print("  %-40s swing %.4g" % (row["key"], row["swing"]))

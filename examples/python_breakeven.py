"""At what price does the offload configuration pay off? (`tiersim breakeven` from Python)

    python3 examples/python_breakeven.py

The L40S price at which one L40S streaming OPT-30B from a Gen5 drive costs as much per million
tokens as six L40S holding it in GPU memory.
"""
import tiersim

result = tiersim.breakeven("scenarios/cost/opt30b-l40s.yaml", vary="economics.prices.gpu_usd",
                           variants=["6x-l40s", "1x-l40s-gen5"], between=(1000, 40000))
print(result["verdict"])
for sample in result["scan"]:
    print("  %10.0f USD: %s" % (sample["value"], sample["better"]))

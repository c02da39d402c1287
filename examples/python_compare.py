"""Which configuration is cheapest per token, and by how much? (`tiersim compare` from Python)

    cmake --install build --component python     # or: export PYTHONPATH=build/python
    python3 examples/python_compare.py

Runs the shipped comparison file (OPT-30B on six L40S against one L40S streaming its weights from
host DRAM or a Gen5 drive), then the same question as a dict: a scenario with 4 and with 8 drives.
Each result is the object `tiersim compare --json` prints; with pandas installed,
pandas.json_normalize(result["variants"]) gives one row per configuration.
"""
import tiersim

result = tiersim.compare("scenarios/cost/opt30b-l40s.yaml")
print("baseline:", result["baseline"])
print("%-24s %12s %12s %14s" % ("configuration", "tokens/s", "USD/Mtoken", "vs baseline"))
for v in result["variants"]:
    if not v["fits"]:  # a configuration that does not fit has no speed or cost
        print("%-24s does not fit: %s" % (v["name"], v.get("shortfall") or v.get("error")))
        continue
    m = v["metrics"]
    ratio = v["ratios"].get("usd_per_million_tokens")
    print("%-24s %12.2f %12.2f %14s" % (v["name"], m["throughput_tokens_per_s"],
                                         m["usd_per_million_tokens"],
                                         "-" if ratio is None else "%.2fx" % ratio))

scenario = "scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml"
drives = tiersim.compare({"compare": {"name": "drives", "variants": [
    {"name": "4 drives", "file": scenario},
    {"name": "8 drives", "file": scenario, "set": {"hardware.nvme.count": 8}}]}})
eight = drives["variants"][1]
print("8 drives instead of 4: %.2fx the tokens/s, bottleneck %s"
      % (eight["ratios"]["throughput_tokens_per_s"], eight["bottleneck"]))

"""tiersim from Python, as a notebook would use it.

    cmake --install build --component python     # or: export PYTHONPATH=build/python
    python3 examples/python_quickstart.py

Runs the Llama-3-70B on one H200 scenario for 1, 2, 4 and 8 Gen5 drives and prints a small table
(with pandas installed, pandas.DataFrame(rows) takes the same rows directly).
"""
import tiersim

rows = []
for drives in (1, 2, 4, 8):
    r = tiersim.run("scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml",
                    set={"hardware.nvme.count": drives})
    rows.append({"drives": drives,
                 "tokens_per_s": r["throughput_tokens_per_s"],
                 "bottleneck": r["bottleneck"],
                 "usd_per_million_tokens": r.get("usd_per_million_tokens")})

print("%6s %14s %12s %24s" % ("drives", "tokens/s", "bottleneck", "USD per million tokens"))
for row in rows:
    cost = row["usd_per_million_tokens"]
    print("%6d %14.2f %12s %24s" % (row["drives"], row["tokens_per_s"], row["bottleneck"],
                                    "-" if cost is None else "%.2f" % cost))

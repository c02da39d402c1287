"""How does the answer change along an axis? (`tiersim sweep` and the results store from Python)

    python3 examples/python_sweep.py

Runs the shipped drive-count sweep into a results database (resumable: a second run simulates
nothing) and reads every stored run back as flat rows; with pandas installed,
pandas.DataFrame(rows) takes them directly.
"""
import os
import tempfile

import tiersim

with tempfile.TemporaryDirectory() as tmp:
    db = os.path.join(tmp, "tiersim-results.db")
    summary = tiersim.sweep("scenarios/sweeps/llama3-70b-drives.yaml", db=db)
    print("%d points, %d simulated, %d do not fit" % (summary["points"], summary["simulated"],
                                                      summary["no_fit"]))
    rows = tiersim.runs(db, sweep=summary["sweep"])
    best = max((r for r in rows if r["fits"]), key=lambda r: r["throughput_tokens_per_s"])
    print("fastest: %s at %.2f tokens/s" % (best["scenario"], best["throughput_tokens_per_s"]))

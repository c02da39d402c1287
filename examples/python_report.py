"""Give me the report to show. (`tiersim compare --db` and `tiersim report` from Python)

    python3 examples/python_report.py [OUT_DIR]

Stores the shipped OPT-30B comparison in a results database and writes the HTML/Markdown/CSV
report (default: a temporary folder, removed at the end). validation=False skips the comparison
with the published measurements that the report's header quotes (tens of seconds); leave it on
for a report you hand over.
"""
import csv
import os
import sys
import tempfile

import tiersim

with tempfile.TemporaryDirectory() as tmp:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tmp, "report")
    db = os.path.join(tmp, "tiersim-results.db")
    tiersim.compare("scenarios/cost/opt30b-l40s.yaml", db=db)
    result = tiersim.report(db, out, validation=False)
    print("wrote %s (%d runs)" % (result["files"]["html"], result["runs"]))
    with open(result["files"]["csv"]) as f:
        rows = [r for r in csv.DictReader(f) if r["metric"] == "usd_per_million_tokens"]
    for r in rows:
        print("  %-16s %8.2f %s" % (r["variant"] or r["scenario_name"], float(r["value"]), r["unit"]))

"""How large a model can I train, and how many requests per second can I serve? (`tiersim capacity`)

    python3 examples/python_capacity.py

The largest model of a DGX-2's shape family per ZeRO strategy, then the highest arrival rate six
L40S sustain for an OPT-30B chatbot with 90 % of requests within its latency targets (a short run
of 300 requests: raise workload.requests until the answer settles).
"""
import tiersim

training = tiersim.capacity("scenarios/training/dgx2-zero3.yaml")
print("%-20s %14s  %s" % ("strategy", "largest model", "next step is limited by"))
for s in training["strategies"]:
    size = "%.1f B params" % (s["max_params"] / 1e9) if s["found"] else "none"
    print("%-20s %14s  %s" % (s["strategy"], size, s["limit"]))

serving = tiersim.capacity("scenarios/serving/opt30b-chatbot-6xl40s.yaml",
                           set={"workload.requests": 300}, tolerance=0.1)
if serving["found"]:
    print("\nserving capacity: %.3g requests/s (%d rates tried)"
          % (serving["capacity_requests_per_s"], len(serving["points"])))
else:
    print("\nserving capacity: none (%s)" % serving["limit"])

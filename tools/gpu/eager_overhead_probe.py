#!/usr/bin/env python3
"""Fixed costs of eager Hugging Face inference on a CUDA GPU: dispatch per op, per layer, per step.

Why: tiersim charges eager PyTorch (the `hf` stacks, model/stack.cpp) a launch-and-dispatch gap per
transformer layer (ExecutionModel::layer_overhead_s, model/perf.hpp) and nothing per generated
token beyond the kernels. That constant was set from published ZeRO-Inference rows, not measured.
This probe measures it with Hugging Face transformers' own modules, in three parts:

1. op: one PyTorch op on a one-element CUDA tensor, back to back, host time per op (the floor of
   eager dispatch plus launch).
2. tiny: models of the catalog's architectures shrunk to hidden 128 (their GPU work is a few
   microseconds per kernel, so the host's dispatch sets the pace), at 4, 16 and 32 layers; the
   decode time per generated token against the layer count gives the per-layer cost (slope) and
   the per-step cost of the head, sampling and generate()'s loop (intercept). A profiler pass
   counts the CUDA kernels one decode step launches.
3. full: catalog models at full size with random weights, resident on the GPU (no offload):
   the prefill forward and decode time per token at batch 1 and 8, prompt 512, 32 new tokens,
   through generate(), as tiersim's `policy: {weights: gpu, kv_cache: gpu}` on the hf stack runs
   them. These are end-to-end checks: the prediction with the constants above against a
   measurement of the same program.

Needs PyTorch with CUDA and transformers. Not run in CI (no GPU there). Usage:
  python3 tools/gpu/eager_overhead_probe.py [--parts op,tiny,full] [--json out.json]
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

from cuda_timing import median_wall_s as wall

HERE = os.path.dirname(os.path.abspath(__file__))
HF_DIR = os.path.join(HERE, "..", "..", "scenarios", "catalog", "hf")


def log(*a):
    print(*a, flush=True)


def make_config(name, **override):
    import transformers
    with open(os.path.join(HF_DIR, name + ".json")) as f:
        d = json.load(f)
    d.pop("architectures", None)
    dtype = d.pop("torch_dtype", "float16")
    d.update(override)
    cfg = transformers.AutoConfig.for_model(d.pop("model_type"), **d)
    return cfg, getattr(torch, dtype)


def make_model(cfg, dtype, attn):
    import transformers
    with torch.device("cuda"):
        try:
            m = transformers.AutoModelForCausalLM.from_config(cfg, dtype=dtype,
                                                              attn_implementation=attn)
        except TypeError:
            m = transformers.AutoModelForCausalLM.from_config(cfg, torch_dtype=dtype,
                                                              attn_implementation=attn)
    m = m.to(dtype).eval()
    return m


def gen(model, ids, n):
    with torch.no_grad():
        return model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n,
                              min_new_tokens=n, do_sample=False, pad_token_id=0)


def part_op(out):
    x = torch.zeros(1, device="cuda")
    n = 20000
    for _ in range(1000):
        x.add_(1)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    t_issue = time.perf_counter() - t0
    torch.cuda.synchronize()
    t_all = time.perf_counter() - t0
    out["op"] = {"ops": n, "host_us_per_op": t_issue / n * 1e6, "total_us_per_op": t_all / n * 1e6}
    log(f"op: add_ on one element: {t_issue / n * 1e6:.2f} us/op issued, "
        f"{t_all / n * 1e6:.2f} us/op until done")


def count_kernels(model, ids):
    """CUDA kernels launched by one decode-step forward (KV cache of len(ids) tokens)."""
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad():
        o = model(ids, use_cache=True)
        nxt = ids[:, -1:]
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            model(nxt, past_key_values=o.past_key_values, use_cache=True)
            torch.cuda.synchronize()
    n = 0
    for e in prof.events():
        if getattr(e, "device_type", None) is not None and "CUDA" in str(e.device_type):
            n += 1
    return n


def part_tiny(out, archs, attn, layer_counts=(4, 16, 32), reps=3):
    res = []
    for name in archs:
        shrink = {"llama-3-8b": dict(hidden_size=128, intermediate_size=512, num_attention_heads=4,
                                     num_key_value_heads=2, vocab_size=1024),
                  "opt-13b": dict(hidden_size=128, ffn_dim=512, num_attention_heads=4,
                                  word_embed_proj_dim=128, vocab_size=1024),
                  "bloom-176b": dict(hidden_size=128, n_head=4, vocab_size=1024)}[name]
        layer_key = "n_layer" if name.startswith("bloom") else "num_hidden_layers"
        rows = []
        for layers in layer_counts:
            try:
                cfg, dtype = make_config(name, **shrink, **{layer_key: layers})
                model = make_model(cfg, dtype, attn)
                ids = torch.randint(0, 1000, (1, 32), device="cuda")
                t1 = wall(lambda: gen(model, ids, 1), 5)
                t65 = wall(lambda: gen(model, ids, 65), reps)
                per_tok = (t65 - t1) / 64
                kernels = (count_kernels(model, ids)
                           if layers in (layer_counts[0], layer_counts[-1]) else None)
                rows.append({"layers": layers, "decode_s_per_token": per_tok, "first_s": t1,
                             "kernels_per_step": kernels})
                log(f"tiny {name} {attn} layers {layers}: decode {per_tok * 1e3:.3f} ms/token, "
                    f"first token {t1 * 1e3:.2f} ms, kernels/step {kernels}")
                del model
                torch.cuda.empty_cache()
            except Exception as e:  # one architecture failing does not stop the rest
                log(f"tiny {name} layers {layers}: FAILED {type(e).__name__}: {e}")
        if len(rows) >= 2:
            xs = [r["layers"] for r in rows]
            ys = [r["decode_s_per_token"] for r in rows]
            mx, my = statistics.mean(xs), statistics.mean(ys)
            slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
            icpt = my - slope * mx
            k = [r for r in rows if r["kernels_per_step"]]
            kpl = None
            if len(k) == 2:
                kpl = (k[1]["kernels_per_step"] - k[0]["kernels_per_step"]) / (
                    k[1]["layers"] - k[0]["layers"])
            res.append({"arch": name, "attn": attn, "rows": rows, "per_layer_s": slope,
                        "per_step_s": icpt, "kernels_per_layer": kpl})
            log(f"tiny {name} {attn}: per layer {slope * 1e6:.1f} us, per step {icpt * 1e6:.1f} us,"
                f" kernels per layer {kpl}")
    out.setdefault("tiny", []).extend(res)


def part_full(out, models, attn):
    res = []
    for name in models:
        try:
            cfg, dtype = make_config(name)
            t0 = time.perf_counter()
            model = make_model(cfg, dtype, attn)
            torch.cuda.synchronize()
            nbytes = sum(p.numel() * p.element_size() for p in model.parameters())
            log(f"full {name}: {nbytes / 1e9:.2f} GB of weights made in "
                f"{time.perf_counter() - t0:.1f} s; allocated {torch.cuda.memory_allocated() / 1e9:.2f}"
                f" GB, reserved {torch.cuda.memory_reserved() / 1e9:.2f} GB")
            for batch in (1, 8):
                ids = torch.randint(0, 1000, (batch, 512), device="cuda")
                def fwd():
                    with torch.no_grad():
                        try:  # generate() computes the last position's logits only
                            model(ids, use_cache=True, logits_to_keep=1)
                        except TypeError:
                            model(ids, use_cache=True)
                t_fwd = wall(fwd, 3)
                t1 = wall(lambda: gen(model, ids, 1), 3)
                t32 = wall(lambda: gen(model, ids, 32), 2)
                per_tok = (t32 - t1) / 31
                row = {"model": name, "attn": attn, "batch": batch, "prompt": 512, "gen": 32,
                       "weight_bytes": nbytes, "prefill_forward_s": t_fwd, "generate1_s": t1,
                       "generate32_s": t32, "decode_s_per_token": per_tok,
                       "throughput_tokens_per_s": batch * 32 / t32}
                res.append(row)
                log(f"full {name} {attn} batch {batch}: prefill forward {t_fwd * 1e3:.1f} ms, "
                    f"generate(1) {t1 * 1e3:.1f} ms, generate(32) {t32 * 1e3:.1f} ms, decode "
                    f"{per_tok * 1e3:.2f} ms/token, {batch * 32 / t32:.1f} tokens/s")
            del model
            torch.cuda.empty_cache()
        except Exception as e:
            log(f"full {name}: FAILED {type(e).__name__}: {e}")
    out.setdefault("full", []).extend(res)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", default="op,tiny,full")
    ap.add_argument("--json")
    ap.add_argument("--layers", default="4,16,32", help="layer counts of the tiny models")
    ap.add_argument("--reps", type=int, default=3, help="timed generate() runs per tiny model")
    ap.add_argument("--tiny-archs", default="opt-13b,llama-3-8b,bloom-176b")
    args = ap.parse_args()
    import transformers
    out = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "transformers": transformers.__version__}
    log(out)
    torch.manual_seed(0)
    parts = args.parts.split(",")
    if "op" in parts:
        part_op(out)
    if "tiny" in parts:
        layers = tuple(int(x) for x in args.layers.split(","))
        part_tiny(out, args.tiny_archs.split(","), "eager", layers, args.reps)
        if "llama-3-8b" in args.tiny_archs:
            part_tiny(out, ["llama-3-8b"], "sdpa", layers, args.reps)
    if "full" in parts:
        part_full(out, ["llama-3-8b", "opt-13b"], "sdpa")
        part_full(out, ["opt-13b"], "eager")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())

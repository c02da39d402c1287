"""Measures what the legacy torch.save pays to record a module class's source.

Pickling a whole nn.Module object in the legacy format calls inspect.getsourcelines() once per
distinct module class; CPython 3.9-3.12 parses the class's entire defining file each time (3.13
reads __firstlineno__ instead). This times getsourcelines() for classes of standard-library
modules and reports the cost per byte of the defining file, which feeds
CheckpointSoftware::source_parse_s_per_byte in sim/checkpoint.hpp. Run: python3 source_parse_cost.py
"""
import importlib
import inspect
import os
import statistics
import sys
import time

MODULES = ["argparse", "tarfile", "dataclasses", "pathlib", "typing", "zipfile", "logging",
           "json.decoder", "collections", "functools", "enum", "subprocess"]


def main():
    print(f"python {sys.version.split()[0]}")
    per_byte = []
    for name in MODULES:
        module = importlib.import_module(name)
        size = os.path.getsize(inspect.getsourcefile(module))
        times = []
        for cls in [c for c in vars(module).values()
                    if inspect.isclass(c) and c.__module__ == module.__name__][:8]:
            try:
                t0 = time.perf_counter()
                inspect.getsourcelines(cls)
                times.append(time.perf_counter() - t0)
            except OSError:
                pass
        if times:
            per_byte.append(statistics.median(times) / size)
            print(f"{name:14s} {size / 1e3:6.1f} kB  {statistics.median(times) * 1e3:6.2f} ms/class"
                  f"  {per_byte[-1] * 1e9:4.0f} ns/byte")
    print(f"median {statistics.median(per_byte) * 1e9:.0f} ns per byte of the defining file"
          f" (range {min(per_byte) * 1e9:.0f}-{max(per_byte) * 1e9:.0f})")


if __name__ == "__main__":
    main()

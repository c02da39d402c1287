"""tiersim from Python: load or build a scenario, run it, compare, sweep, read the results store.

Every function returns plain dicts and lists (what ``tiersim run --json`` prints), so
``pandas.DataFrame(tiersim.runs("tiersim-results.db"))`` works directly. Errors are raised as
``tiersim.ConfigError``, ``tiersim.ModelError``, ... (all subclasses of ``tiersim.Error``) with the
same file/line/key message the command line prints.

    import tiersim
    r = tiersim.run("scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml",
                    set={"hardware.nvme.count": 8})
    print(r["throughput_tokens_per_s"], r["units"]["throughput_tokens_per_s"])

A scenario is a file path or a dict with the same keys as a scenario file (``tiersim schema``).
``set`` overrides keys as ``--set`` does: a dict ``{"workload.batch": 64}``, one
``"key=value"`` string or a list of them. ``data_dir`` is the folder holding ``catalog/`` (default: as for the
``tiersim`` program, ``$TIERSIM_DATA_DIR`` or the source tree's ``scenarios/``).
"""

import json
import os

from . import _tiersim
from ._tiersim import CatalogError, ConfigError, Error, IoError, ModelError, StoreError

__all__ = [
    "run", "resolve", "compare", "sweep", "runs",
    "Error", "ConfigError", "CatalogError", "ModelError", "IoError", "StoreError",
]
__version__ = _tiersim.__version__


def _source(scenario):
    """(text or path, is_file) for the native calls. A dict becomes JSON, which is valid YAML."""
    if isinstance(scenario, dict):
        return json.dumps(scenario), False
    if isinstance(scenario, (str, os.PathLike)):
        return os.fspath(scenario), True
    raise TypeError("a scenario is a file path or a dict, not %s" % type(scenario).__name__)


def _sets(overrides):
    if overrides is None:
        return []
    if isinstance(overrides, str):
        # One "key=value": iterating it would give one override per character.
        return [overrides]
    if isinstance(overrides, (bytes, bytearray)):
        raise TypeError("set is a dict, a \"key=value\" string or a list of them, not bytes")
    if isinstance(overrides, dict):
        # Values as YAML: JSON is valid YAML, so numbers, strings, lists and dicts all round-trip.
        return ["%s=%s" % (k, json.dumps(v)) for k, v in overrides.items()]
    return [str(s) for s in overrides]


def run(scenario, set=None, data_dir=""):
    """Simulates one scenario; returns the ``tiersim run --json`` object as a dict.

    Ctrl-C (KeyboardInterrupt) stops even a long simulation (a million serving requests) within
    a fraction of a second."""
    text, is_file = _source(scenario)
    return json.loads(_tiersim.run(text, is_file, _sets(set), data_dir))


def resolve(scenario, set=None, data_dir=""):
    """The fully resolved scenario: ``{"name", "hash", "workload", "resolved_yaml"}``."""
    text, is_file = _source(scenario)
    return json.loads(_tiersim.resolve(text, is_file, _sets(set), data_dir))


def compare(scenarios, set=None, data_dir=""):
    """Runs several scenarios; each result dict gains ``ratios`` to the first (the baseline).

    Ctrl-C (KeyboardInterrupt) stops it within a fraction of a second, as for ``run``."""
    sources = [_source(s) for s in scenarios]
    return json.loads(_tiersim.compare(sources, _sets(set), data_dir))


def sweep(file, db="tiersim-results.db", threads=0, data_dir=""):
    """Runs a sweep file into a results database, as ``tiersim sweep`` does; returns a summary.

    Ctrl-C (KeyboardInterrupt) stops it within a fraction of a second (the points in flight are
    dropped, as when ``tiersim sweep`` is killed); running the sweep again resumes it."""
    return json.loads(_tiersim.sweep(os.fspath(file), os.fspath(db), int(threads), data_dir))


def runs(db, sweep=None):
    """Every stored run (or one sweep's), one flat dict per run with the metrics as keys."""
    return json.loads(_tiersim.runs(os.fspath(db), sweep))

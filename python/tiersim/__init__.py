"""tiersim from Python: every study of the ``tiersim`` program, as functions.

=================  ==========================================  =============================
function           what                                        returns what this prints
=================  ==========================================  =============================
``run``            one scenario                                ``tiersim run --json``
``compare``        configurations side by side (also           ``tiersim compare --json``
                   comparison files, top-level ``compare:``)
``sweep``          a sweep file into a results database        ``tiersim sweep --json``
``plan``           cheapest configurations meeting             ``tiersim plan --json``
                   constraints, the Pareto front
``capacity``       largest trainable model per ZeRO strategy,  ``tiersim capacity --json``
                   or the highest sustained serving rate
``sensitivity``    tornado table per configuration             ``tiersim sensitivity --json``
``breakeven``      value of one input where two configs tie    ``tiersim breakeven --json``
``whatif``         nearest assumptions under which one config  ``tiersim whatif --json``
                   beats another by a ratio
``validate``       predictions against published measurements  ``tiersim validate --json``
``report``         HTML/Markdown/CSV report from a database    ``tiersim report --json``
``catalog``        the GPUs, drives, hosts, models and prices  ``tiersim catalog --json``
``runs``           the stored runs of a database, flat rows    (for pandas)
``resolve``        the fully resolved scenario
=================  ==========================================  =============================

Keyword arguments mirror the command's flags (``--no-slo`` is ``slo=False``, ``--set`` is
``set=``). Every function returns plain dicts and lists, exactly the object the command prints with
``--json`` (CTest checks each against the program), so ``pandas.DataFrame(tiersim.runs(db))`` or
``pandas.json_normalize(tiersim.compare(f)["variants"])`` work directly. Ctrl-C
(KeyboardInterrupt) stops any of them within moments, inside a long simulation as between the
simulations of a study. Errors are raised as ``tiersim.ConfigError``, ``tiersim.ModelError``, ...
(all subclasses of ``tiersim.Error``) with the same file/line/key message the command line prints.

    import tiersim
    r = tiersim.run("scenarios/inference/llama3-70b-h200-4x-gen5-gds.yaml",
                    set={"hardware.nvme.count": 8})
    print(r["throughput_tokens_per_s"], r["units"]["throughput_tokens_per_s"])

A scenario is a file path or a dict with the same keys as a scenario file (``tiersim schema``);
``compare``, ``sensitivity``, ``breakeven`` and ``whatif`` also take comparison files or dicts
with the top-level key ``compare`` (scenarios/README.md, "Comparison files"), alone or in a list.
``set`` overrides keys as ``--set`` does: a dict ``{"workload.batch": 64}``, one ``"key=value"``
string or a list of them. ``data_dir`` is the folder holding ``catalog/`` (default: as for the
``tiersim`` program, ``$TIERSIM_DATA_DIR`` or the source tree's ``scenarios/``). Files the
program writes (``plan``'s scenarios, ``report``'s pages) replace only files tiersim wrote there,
unless ``force=True`` (``--force``).
"""

import json
import os

from . import _tiersim
from ._tiersim import (CatalogError, ConfigError, Error, Interrupted, IoError, ModelError,
                       StoreError)

__all__ = [
    "run", "resolve", "compare", "sweep", "runs", "plan", "capacity", "sensitivity", "breakeven",
    "whatif", "validate", "report", "catalog",
    "Error", "ConfigError", "CatalogError", "ModelError", "IoError", "StoreError", "Interrupted",
]
# The metric `sensitivity`, `breakeven` and `report` explain by default (as the program does).
_DEFAULT_METRIC = "usd_per_million_tokens"
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


def run(scenario, set=None, data_dir="", db=None):
    """Simulates one scenario; returns the ``tiersim run --json`` object as a dict (with
    ``closest_fits`` when it does not fit). ``db``: also store the run in this results database,
    as ``tiersim run --db`` does.

    Ctrl-C (KeyboardInterrupt) stops even a long simulation (a million serving requests) within
    a fraction of a second."""
    text, is_file = _source(scenario)
    return json.loads(_tiersim.run(text, is_file, _sets(set), data_dir, _path(db)))


def resolve(scenario, set=None, data_dir=""):
    """The fully resolved scenario: ``{"name", "hash", "workload", "resolved_yaml"}``."""
    text, is_file = _source(scenario)
    return json.loads(_tiersim.resolve(text, is_file, _sets(set), data_dir))


def _sources(scenarios):
    """The inputs of compare/sensitivity/breakeven/whatif: one path or dict, or a list of them."""
    if isinstance(scenarios, (str, os.PathLike, dict)):
        scenarios = [scenarios]
    return [_source(s) for s in scenarios]


def _path(p):
    return "" if p is None else os.fspath(p)


def _names(names):
    if names is None:
        return []
    if isinstance(names, str):
        return [names]
    return [str(n) for n in names]


def compare(scenarios, set=None, data_dir="", db=None):
    """Runs several configurations side by side: ``tiersim compare --json`` as a dict.

    ``scenarios``: scenario and comparison files or dicts, one or a list. The result has
    ``baseline`` (the first configuration), ``metrics`` and ``variants``, one dict per
    configuration with its ``metrics``, ``units``, ``ratios`` to the baseline and ``sources``.
    ``db``: also store every result in this results database (for ``report``)."""
    return json.loads(_tiersim.compare(_sources(scenarios), _sets(set), data_dir, _path(db)))


def sweep(file, db="tiersim-results.db", threads=0, data_dir="", limit=0):
    """Runs a sweep file into a results database, as ``tiersim sweep`` does; returns its summary
    (``tiersim sweep --json``).

    Ctrl-C (KeyboardInterrupt) stops it within a fraction of a second (the points in flight are
    dropped, as when ``tiersim sweep`` is killed); running the sweep again resumes it. ``limit``
    stops after that many newly stored points."""
    return json.loads(_tiersim.sweep(os.fspath(file), os.fspath(db), int(threads), data_dir,
                                     int(limit)))


def plan(file, out=None, db=None, threads=0, prune=True, force=False, data_dir=""):
    """Finds the best configurations meeting a plan file's constraints and the Pareto front:
    ``tiersim plan --json`` as a dict. Each result is also written into ``out`` (default
    ``<plan name>-plan``) as a scenario file that ``run`` reproduces (its path is ``file`` in each
    entry); ``force=True`` replaces files there that tiersim did not write."""
    return json.loads(_tiersim.plan(os.fspath(file), _path(out), _path(db), int(threads),
                                    bool(prune), bool(force), data_dir))


def capacity(scenario, set=None, data_dir="", attainment=90.0, tolerance=0.02, start=0.0,
             stability=True, slo=True, db=None):
    """``tiersim capacity --json`` as a dict; ``scenario`` is a scenario file. A training
    scenario: the largest model of its shape family per ZeRO strategy (``strategies``). A serving scenario: the highest arrival rate it
    sustains with ``attainment`` percent of requests within its SLO and a stable queue
    (``capacity_requests_per_s``, every rate tried in ``points``, the run at capacity in
    ``at_capacity``); ``stability=False`` / ``slo=False`` drop a criterion, ``start`` is the first
    rate tried in requests/s (0: the scenario's), ``db`` stores every rate tried."""
    return json.loads(_tiersim.capacity(os.fspath(scenario), _sets(set), data_dir,
                                        float(attainment), float(tolerance), float(start),
                                        bool(stability), bool(slo), _path(db)))


def sensitivity(scenarios, metric=_DEFAULT_METRIC, range=0.2, inputs=None, variants=None,
                set=None, threads=0, data_dir=""):
    """The tornado table of each configuration: ``tiersim sensitivity --json`` as a dict.

    Every input (or those of ``inputs``: ``"KEY"`` or ``"KEY=LOW:HIGH"``) moved alone by
    +-``range`` of its value; ``variants`` picks variants of a comparison file by name."""
    return json.loads(_tiersim.sensitivity(_sources(scenarios), metric, float(range),
                                           _names(inputs), _names(variants), _sets(set),
                                           int(threads), data_dir))


def breakeven(scenarios, vary, between=None, variants=None, metric=_DEFAULT_METRIC, sense=None,
              points=9, set=None, data_dir=""):
    """The value of ``vary`` (a numeric scenario key) at which two configurations tie on
    ``metric``: ``tiersim breakeven --json`` as a dict (``tie``, ``verdict``, ``scan``).

    ``scenarios``: a comparison file (its first two variants, or the two named in ``variants``)
    or two scenarios. ``between``: (low, high), default a quarter to four times the value as
    given. ``sense``: "minimize" or "maximize" for metrics whose better direction is not known."""
    if between is not None:
        low, high = between
        between = (float(low), float(high))
    return json.loads(_tiersim.breakeven(_sources(scenarios), vary, between, _names(variants),
                                         metric, sense or "", int(points), _sets(set), data_dir))


def whatif(scenarios, ratio, variants=None, metric="return_per_dollar", sense=None, vary=None,
           vary_a=None, vary_b=None, points=7, max_points=3000, set=None, threads=0, data_dir=""):
    """What would it take for configuration A to beat configuration B by ``ratio`` on ``metric``
    (default ``return_per_dollar``): ``tiersim whatif --json`` as a dict (``found``, ``nearest``
    with its ``settings_a`` / ``settings_b``, ``best``, ``inputs`` with each input's scan alone).

    ``scenarios``: a comparison file (its first two variants, or the two named in ``variants``,
    A then B) or two scenarios. ``vary``, ``vary_a``, ``vary_b`` (``--vary``, ``--vary-a``,
    ``--vary-b``): inputs changed in both configurations, only in A, only in B; each ``"KEY"``,
    ``"KEY=LOW:HIGH"`` (factors of the value as given) or, for a choice key, ``"KEY=V1,V2"``; one
    string or a list. None of them: the default inputs (prices, rates, drives, batch, lengths, B's
    software stack). ``points``: values of each input scanned alone; ``max_points``: points
    evaluated at most. ``sense``: "minimize" or "maximize" for metrics whose better direction is
    not known. Ctrl-C (KeyboardInterrupt) stops the search within moments."""
    return json.loads(_tiersim.whatif(_sources(scenarios), float(ratio), _names(variants), metric,
                                      sense or "", _names(vary), _names(vary_a), _names(vary_b),
                                      int(points), int(max_points), _sets(set), int(threads),
                                      data_dir))


def validate(dir=None, data_dir="", max_mape=15.0):
    """Every reference scenario against its published measurement: ``tiersim validate --json``
    as a dict (``cases``, ``groups``, ``established_within_limit`` for ``max_mape`` percent)."""
    return json.loads(_tiersim.validate(_path(dir), data_dir, float(max_mape)))


def report(db, out, sweep=None, title="tiersim cost report", objective=_DEFAULT_METRIC,
           validation=True, sensitivity=True, force=False, vendor_dir="", data_dir=""):
    """Writes the report of a results database into ``out`` (index.html, report.md,
    metrics.csv) as ``tiersim report`` does; returns ``tiersim report --json``: the files, the
    number of runs and the validation figures. ``validation=False`` and ``sensitivity=False``
    skip the reference validation and the tornado charts (faster)."""
    return json.loads(_tiersim.report(os.fspath(db), os.fspath(out), sweep, title, objective,
                                      bool(validation), bool(sensitivity), bool(force),
                                      _path(vendor_dir), data_dir))


def catalog(which="all", data_dir=""):
    """What the catalogs define, every field with its sources: ``tiersim catalog --json``.
    ``which``: "all", "gpus", "drives", "hosts", "models" or "prices"."""
    return json.loads(_tiersim.catalog(which, data_dir))


def runs(db, sweep=None):
    """Every stored run (or one sweep's), one flat dict per run with the metrics as keys."""
    return json.loads(_tiersim.runs(os.fspath(db), sweep))

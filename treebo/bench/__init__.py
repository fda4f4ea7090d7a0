"""Regret-curve experiments: a grid of problems x surrogates x seeds.

Every run minimizes one benchmark problem (:mod:`treebo.problems`) with one
surrogate from one seed and becomes one JSON record, appended as one line to
``<out>/<problem>.jsonl`` as soon as it finishes. Before a grid starts, the
records already in ``out`` are read and every run they hold (with at least the
requested number of calls) is skipped, so an interrupted grid resumes where it
stopped, and adding a surrogate or a seed to an existing results directory
runs only the missing runs.

The subpackage has one module per concept; every public name is importable
from ``treebo.bench`` itself:

:mod:`~treebo.bench.spec`
    :class:`RunSpec`, one run of a grid, and the key that identifies it.
:mod:`~treebo.bench.presets`
    The two protocols, ``"default"`` and ``"paper"`` (Kim & Choi 2022, and
    where the ``paper`` preset deviates from their code): budgets, the
    paper's initial design, the :func:`~treebo.minimize` arguments of a run.
:mod:`~treebo.bench.runner`
    Running one run (:func:`run_one`, optionally in a SQLite study) and a
    grid (:func:`plan_grid`, :func:`run_grid`), which resumes.
:mod:`~treebo.bench.records`
    The JSON record of a run; reading and appending ``.jsonl`` files.
:mod:`~treebo.bench.analysis`
    Regret curves, summary and seed-by-seed tables, and their Markdown.
"""

from .analysis import (
    Curves,
    format_paired,
    format_summary,
    paired_wins,
    regret_curves,
    summary_table,
    surrogate_order,
)
from .presets import (
    N_INITIAL,
    PRESETS,
    build_problem,
    default_n_calls,
    default_n_initial,
    minimize_settings,
    paper_initial_design,
)
from .records import (
    SCHEMA_VERSION,
    append_record,
    completed_runs,
    load_results,
    timings,
    to_jsonable,
    trajectory,
    versions,
)
from .runner import BenchError, parse_int_ranges, parse_seeds, plan_grid, run_grid, run_one
from .spec import RunSpec

__all__ = [
    "PRESETS",
    "RunSpec",
    "run_one",
    "run_grid",
    "plan_grid",
    "load_results",
    "append_record",
    "timings",
    "to_jsonable",
    "parse_seeds",
    "parse_int_ranges",
    "trajectory",
    "completed_runs",
    "regret_curves",
    "Curves",
    "summary_table",
    "format_summary",
    "paired_wins",
    "format_paired",
    "surrogate_order",
    "paper_initial_design",
    "minimize_settings",
    "default_n_calls",
    "default_n_initial",
    "BenchError",
    "SCHEMA_VERSION",
    "N_INITIAL",
    "build_problem",
    "versions",
]

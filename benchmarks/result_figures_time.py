"""Seconds to look at a result: refit, partial dependence, importance, figures, report.

For a study of N told trials on D real dimensions (the BwO forest), each step
of :mod:`treebo.results.inspection`, :mod:`treebo.plotting` and :mod:`treebo.results.report`
is timed and divided by the time of one ``Optimizer.ask()`` at the same N,
measured in the same run (the ``per ask`` column), so the figures survive a
noisy machine. A second baseline shows what computing the curves in one
``predict`` call saves: the same 1-D partial dependence with one ``predict``
call per grid value (a Python loop over the 40 values of each dimension).

    python benchmarks/result_figures_time.py                 # N=100, D=6
    python benchmarks/result_figures_time.py --n 200 --dims 10 --repeats 3

Needs matplotlib (``pip install 'treebo[plot]'``) for the figure and report rows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np

import treebo
from treebo import Optimizer, Real
from treebo.acquisition import sobol_candidates
from treebo.results.inspection import (
    dimension_grid,
    fit_surrogate,
    parameter_importance,
    partial_dependence,
    partial_dependence_2d,
)
from treebo.results.io import read_result


def _study(path: str, n: int, dims: int, seed: int) -> Optimizer:
    """A study of ``n`` told points (Sobol, then the optimizer's own) on a sum of squares."""
    rng = np.random.default_rng(seed)
    weights = rng.uniform(0.1, 2.0, dims)
    opt = Optimizer(
        [Real(0, 1) for _ in range(dims)], random_state=seed, storage=path, n_initial_points=n
    )  # cheap to build: no model-based asks
    for _ in range(n):
        x = opt.ask()
        opt.tell(x, float(np.sum(weights * (np.asarray(x) - 0.3) ** 2)))
    return opt


def _loop_partial_dependence(result, model, n_points: int, n_samples: int) -> list:
    """The 1-D curves with one predict call per grid value (the baseline)."""
    space = result.space
    sample = sobol_candidates(n_samples, space.n_columns, np.random.default_rng(0))
    curves = []
    for j in range(space.n_dims):
        encoded, _, _ = dimension_grid(space.dimensions[j], n_points)
        average = []
        for row in encoded:
            X = sample.copy()
            X[:, space.columns_of(j)] = row
            average.append(model.predict(space.snap(X)).mean())
        curves.append(np.array(average))
    return curves


def _ask_time(result, repeats: int, seed: int) -> float:
    """Median seconds of a model-based ``ask`` with the result's trials told."""
    opt = Optimizer(result.space, random_state=seed)
    for x, y in zip(result.x_iters, result.func_vals):
        opt.tell(x, y)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        x = opt.ask()
        times.append(time.perf_counter() - start)
        opt.tell(x, float(np.sum((np.asarray(x) - 0.3) ** 2)))
    return statistics.median(times)


def _time(func, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100, help="told trials (default: 100)")
    parser.add_argument("--dims", type=int, default=6, help="real dimensions (default: 6)")
    parser.add_argument("--repeats", type=int, default=3, help="timings per step (median)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "study.db")
        _study(path, args.n, args.dims, args.seed).close()
        result = read_result(path)
        ask = _ask_time(result, args.repeats, args.seed)
        model = fit_surrogate(result)
        rows = [
            ("one Optimizer.ask (baseline)", ask),
            ("read_result", _time(lambda: read_result(path), args.repeats)),
            ("fit_surrogate", _time(lambda: fit_surrogate(result), args.repeats)),
            (
                "partial_dependence, every dimension",
                _time(lambda: partial_dependence(result, model=model), args.repeats),
            ),
            (
                "  the same, one predict per grid value",
                _time(lambda: _loop_partial_dependence(result, model, 40, 256), args.repeats),
            ),
            (
                "partial_dependence_2d, one pair",
                _time(lambda: partial_dependence_2d(result, 0, 1, model=model), args.repeats),
            ),
            (
                "parameter_importance",
                _time(lambda: parameter_importance(result, model=model), args.repeats),
            ),
        ]
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            from treebo.plotting import plot_objective
            from treebo.results.report import report_html

            def objective_png():
                fig = plot_objective(result, model=model)
                fig.savefig(os.path.join(tmp, "objective.png"), dpi=90)
                plt.close(fig)

            rows += [
                ("plot_objective + savefig (all pairs)", _time(objective_png, 1)),
                ("report_html (refit, four figures, table)", _time(lambda: report_html(result), 1)),
            ]
        except ImportError:
            print("(matplotlib missing: no figure or report rows)")

    print(
        f"treebo {treebo.__version__}; N = {args.n} told trials, D = {args.dims} real "
        f"dimensions, BwO forest; median of {args.repeats} (figures: 1)\n"
    )
    print("| step | seconds | per ask |\n| --- | ---: | ---: |")
    for name, seconds in rows:
        print(f"| {name} | {seconds:.3f} | {seconds / ask:.2f} |")


if __name__ == "__main__":
    main()

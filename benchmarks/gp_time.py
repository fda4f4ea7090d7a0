"""Seconds per ask of the ``gp`` surrogate as the data grow, with and without the fitting subset.

Each row is one data size N in a D-dimensional real space (uniformly random
told points of the smooth function of ``iteration_time.py``): the median
seconds of ``--repeats`` asks of an ``Optimizer(surrogate="gp")`` (fit, 50,000
Sobol candidates plus the local neighbours of the best points, prediction,
L-BFGS-B polish of the acquisition maximum), each point told before the next
ask. ``default`` is the surrogate's defaults: beyond ``max_fit_samples`` = 200
points the marginal likelihood is maximized on a random subset of 200 and
then refined on all N, and the posterior conditions on all N. ``all`` is
``max_fit_samples=None``: scikit-learn's fit on all N points, as up to 200.
In the same run, for the same N and D, the reference is a bare
``sklearn.ensemble.ExtraTreesRegressor(n_estimators=100)`` ``.fit(X, y)`` +
``.predict(C)`` on 50,000 random points; ``ratio`` divides a median by it.
Wall seconds are the project's measure; CPU seconds (of this process) are
printed beside them because a machine shared with other jobs inflates wall
time. Run it with ``OMP_NUM_THREADS=1``: the figures are for one thread.

    OMP_NUM_THREADS=1 python benchmarks/gp_time.py                 # N = 100, 300, 1000; D = 10
    OMP_NUM_THREADS=1 python benchmarks/gp_time.py --all-repeats 1  # the recorded run

Results are printed and written as JSON to ``benchmarks/results/gp_time/gp_time.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import sklearn
from iteration_time import N_CANDIDATES, _objective, make_space
from sklearn.ensemble import ExtraTreesRegressor

import treebo
from treebo import Optimizer

SETTINGS = {"default": {}, "all": {"max_fit_samples": None}}


def _clocks() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    """Wall and CPU seconds since ``start`` (from ``_clocks``)."""
    wall, cpu = _clocks()
    return wall - start[0], cpu - start[1]


def reference_seconds(
    X: np.ndarray, y: np.ndarray, repeats: int, rng: np.random.Generator
) -> list[tuple[float, float]]:
    """Wall and CPU seconds of ExtraTreesRegressor(100).fit(X, y).predict(50,000 points)."""
    times = []
    for _ in range(repeats):
        C = rng.random((N_CANDIDATES, X.shape[1]))
        start = _clocks()
        ExtraTreesRegressor(n_estimators=100).fit(X, y).predict(C)
        times.append(_since(start))
    return times


def ask_seconds(
    X: np.ndarray, y: np.ndarray, repeats: int, params: dict
) -> list[tuple[float, float, float]]:
    """Wall, CPU and fit seconds of ``repeats`` asks after telling ``X``, ``y``."""
    space = make_space("real", X.shape[1])
    opt = Optimizer(space, surrogate="gp", surrogate_params=params, random_state=0)
    for x, value in zip(space.decode(X), y):
        opt.tell(x, float(value))
    times = []
    for _ in range(repeats):
        start = _clocks()
        x = opt.ask()
        times.append((*_since(start), opt.trials[-1].fit_time))
        opt.tell(x, float(_objective(space.encode([x]))[0]))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--dims", type=int, default=10)
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed asks with the defaults, and reference fits"
    )
    parser.add_argument(
        "--all-repeats",
        type=int,
        default=2,
        help="timed asks with max_fit_samples=None (minutes each at N=1,000; 0 skips them)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).parent / "results" / "gp_time" / "gp_time.json"
    )
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    rows = []
    print(
        f"treebo {treebo.__version__}, scikit-learn {sklearn.__version__}, "
        f"{platform.processor() or platform.machine()}, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}"
    )
    print("ratio = wall seconds per ask / bare ExtraTreesRegressor(100).fit+predict(50k), same run")
    print(f"{'N':>5} {'D':>3} {'setting':<10} {'wall s':>8} {'cpu s':>8} {'fit s':>7} {'ratio':>6}")
    for n in args.sizes:
        X = rng.random((n, args.dims))
        y = _objective(X)
        walls, cpus = zip(*reference_seconds(X, y, args.repeats, rng))
        reference = statistics.median(walls)
        print(
            f"{n:>5} {args.dims:>3} {'reference':<10} {reference:8.3f} "
            f"{statistics.median(cpus):8.3f} {'':>7} {1.0:6.2f}",
            flush=True,
        )
        row = dict(
            N=n, D=args.dims, reference=dict(wall=list(walls), cpu=list(cpus), median=reference)
        )
        rows.append(row)
        for setting, params in SETTINGS.items():
            repeats = args.repeats if setting == "default" else args.all_repeats
            if repeats == 0:
                continue
            walls, cpus, fits = zip(*ask_seconds(X, y, repeats, params))
            median = statistics.median(walls)
            print(
                f"{n:>5} {args.dims:>3} {setting:<10} {median:8.3f} "
                f"{statistics.median(cpus):8.3f} {statistics.median(fits):7.3f} "
                f"{median / reference:6.2f}",
                flush=True,
            )
            row[setting] = dict(
                params=params,
                wall=list(walls),
                cpu=list(cpus),
                fit=list(fits),
                median=median,
                ratio=median / reference,
            )
            # Written after every setting, so that an interrupted run keeps what it measured.
            _write(args.out, rows)
    print(f"wrote {args.out}")


def _write(path: Path, rows: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps({"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "rows": rows}, indent=1)
    )


if __name__ == "__main__":
    main()

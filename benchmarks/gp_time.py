"""Seconds per ask of the ``gp`` surrogate as the data grow, with and without the fitting subset.

Each row is one data size N in a D-dimensional real space (uniformly random
told points of a smooth function, as in ``iteration_time.py``): the median
seconds of ``--repeats`` asks of an ``Optimizer(surrogate="gp")`` (fit, 50,000
Sobol candidates plus the local neighbours of the best points, prediction,
L-BFGS-B polish of the acquisition maximum) with the defaults, where the
marginal likelihood is maximized on at most ``max_fit_samples`` = 200 points
and the posterior conditions on all N; and the same with
``max_fit_samples=None``, which maximizes it on all N points. In the same
run, for the same N and D, the reference is a bare
``sklearn.ensemble.ExtraTreesRegressor(n_estimators=100)`` ``.fit(X, y)`` +
``.predict(C)`` on 50,000 random points; ``ratio`` divides a median by it.

    OMP_NUM_THREADS=1 python benchmarks/gp_time.py                 # N = 100, 300, 1000; D = 10
    OMP_NUM_THREADS=1 python benchmarks/gp_time.py --sizes 1000 --all-repeats 1

Results are printed and written as JSON to ``benchmarks/results/gp_time.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from pathlib import Path

import numpy as np
import sklearn
from iteration_time import _objective, make_space, reference_seconds, surrogate_seconds

import treebo

SETTINGS = {"subset": {}, "all": {"max_fit_samples": None}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 300, 1000])
    parser.add_argument("--dims", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed asks with the defaults (and reference fits)")
    parser.add_argument("--all-repeats", type=int, default=2,
                        help="timed asks with max_fit_samples=None, which take minutes at N=1,000")
    parser.add_argument("--out", type=Path,
                        default=Path(__file__).parent / "results" / "gp_time.json")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    rows = []
    print(f"treebo {treebo.__version__}, scikit-learn {sklearn.__version__}, "
          f"{platform.processor() or platform.machine()}")
    print("ratio = seconds per ask / bare ExtraTreesRegressor(100).fit+predict(50k), same run")
    print(f"{'N':>5} {'D':>3} {'setting':<10} {'median s':>9} {'fit s':>7} {'acq s':>7} "
          f"{'ratio':>6}")
    space = make_space("real", args.dims)
    for n in args.sizes:
        X = rng.random((n, args.dims))
        y = _objective(X)
        reference = statistics.median(reference_seconds(X, y, args.repeats, rng, None))
        print(f"{n:>5} {args.dims:>3} {'reference':<10} {reference:9.3f} {'':>7} {'':>7} "
              f"{1.0:6.2f}", flush=True)
        row = dict(N=n, D=args.dims, reference=reference)
        for setting, params in SETTINGS.items():
            repeats = args.repeats if setting == "subset" else args.all_repeats
            if repeats == 0:
                continue
            totals, fits, acqs = surrogate_seconds("gp", space, X, y, repeats, params)
            median = statistics.median(totals)
            print(f"{n:>5} {args.dims:>3} {setting:<10} {median:9.3f} "
                  f"{statistics.median(fits):7.3f} {statistics.median(acqs):7.3f} "
                  f"{median / reference:6.2f}", flush=True)
            row[setting] = dict(params=params, seconds=totals, median=median,
                                fit=statistics.median(fits), acq=statistics.median(acqs),
                                ratio=median / reference)
        rows.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
                                    "rows": rows}, indent=1))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

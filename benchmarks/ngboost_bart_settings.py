"""Predictive quality against cost for NGBoost and BART settings, with RF and BwO beside them.

Quality: Friedman-1 (``sklearn.datasets.make_friedman1``, 10 features, noise
s.d. 1), N training points, 2,000 held-out noisy points, several seeds:
mean held-out negative log likelihood of the predictive Normal (NLL, nats per
point), RMSE of the mean, and the share of held-out points inside the central
90% predictive interval.

Cost: seconds to fit on N = 200 points of Friedman-1 with 6 features and
predict mean and variance at 50,000 random points (the work of one SMBO
iteration without the acquisition), median over repeats. A bare
``ExtraTreesRegressor(n_estimators=100).fit + predict(50,000)`` is timed
between the settings in the same run; ``ratio`` divides by its median, so the
figure survives a noisy machine.

    python benchmarks/ngboost_bart_settings.py                   # every setting
    python benchmarks/ngboost_bart_settings.py --only ngboost --seeds 3
    python benchmarks/ngboost_bart_settings.py --sizes 50 200 500 --no-time
    python benchmarks/ngboost_bart_settings.py --regret     # short SMBO runs instead

``--regret`` compares settings where held-out quality and optimization
disagree: log10 simple regret of 40-call ``minimize`` runs on Branin
(10,000 candidates, seeds 0-2) and the best value of 25-call runs on a small
mixed space (1,000 candidates, seeds 10-13).

Results are printed as Markdown tables and written as JSON to
``benchmarks/results/ngboost_bart_settings/ngboost_bart_settings.json``.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import time
from pathlib import Path

import numpy as np
import sklearn
from scipy.stats import norm
from sklearn.datasets import make_friedman1
from sklearn.ensemble import ExtraTreesRegressor

import treebo
from treebo import Binary, Categorical, Integer, Real, minimize
from treebo.problems import get_problem
from treebo.surrogates import make_surrogate

# (label, registry name, parameters). The first of each model is its library's
# own default or the setting of the paper it comes from; "default" marks treebo's.
SETTINGS = [
    ("rf (baseline)", "rf", {}),
    ("bwo (baseline)", "bwo", {}),
    (
        "ngboost library default 500 x 0.01, leaf 1",
        "ngboost",
        dict(n_estimators=500, learning_rate=0.01, min_samples_leaf=1),
    ),
    (
        "ngboost 100 x 0.05, leaf 1",
        "ngboost",
        dict(n_estimators=100, learning_rate=0.05, min_samples_leaf=1),
    ),
    ("ngboost 200 x 0.01", "ngboost", dict(n_estimators=200, learning_rate=0.01)),
    ("ngboost 100 x 0.02 (default)", "ngboost", {}),
    ("ngboost 50 x 0.04", "ngboost", dict(n_estimators=50, learning_rate=0.04)),
    ("ngboost 100 x 0.02, minibatch 0.5", "ngboost", dict(minibatch_frac=0.5)),
    ("ngboost 100 x 0.02, depth 2", "ngboost", dict(max_depth=2)),
    (
        "bart 200 trees x 100 draws, 1 chain, burn-in 100",
        "bart",
        dict(n_trees=200, n_draws=100, n_chains=1, n_burnin=100, thinning=1),
    ),
    (
        "bart stochtree-style: 200 x 100, 1 chain after 5 GFR",
        "bart",
        dict(n_trees=200, n_draws=100, n_chains=1, n_gfr=5, n_burnin=0, thinning=1),
    ),
    ("bart 50 x 48, 1 chain", "bart", dict(n_chains=1)),
    ("bart 50 x 48, 4 chains, burn-in 200, thin 2 (default)", "bart", {}),
    ("bart 50 x 48, 4 chains, burn-in 100", "bart", dict(n_burnin=100)),
    ("bart 50 x 48, 4 chains, thin 1", "bart", dict(thinning=1)),
    ("bart 50 x 48, 8 chains", "bart", dict(n_chains=8)),
    ("bart 50 x 48, 4 chains after 4 GFR, burn-in 50", "bart", dict(n_gfr=4, n_burnin=50)),
    ("bart 50 x 96, 4 chains", "bart", dict(n_draws=96)),
    ("bart 100 x 24, 4 chains", "bart", dict(n_trees=100, n_draws=24)),
    ("bart 20 x 96, 4 chains", "bart", dict(n_trees=20, n_draws=96)),
]

# (label, registry name, parameters) compared by --regret.
REGRET_SETTINGS = [
    ("ngboost (default: leaf 1, minibatch 1.0)", "ngboost", {}),
    ("ngboost, leaf 5", "ngboost", dict(min_samples_leaf=5)),
    ("ngboost, minibatch 0.5", "ngboost", dict(minibatch_frac=0.5)),
    ("bart (default: leaf 1)", "bart", {}),
    ("bart, leaf 5 (stochtree's default)", "bart", dict(min_samples_leaf=5)),
]
_MIXED_SPACE = {
    "lr": Real(1e-4, 1.0, prior="log-uniform"),
    "layers": Integer(1, 4),
    "activation": Categorical(["relu", "tanh", None]),
    "batchnorm": Binary(),
}


def _mixed(p: dict) -> float:
    # Minimum 0 at lr = 0.01, 2 layers, relu, no batchnorm.
    return (
        (math.log10(p["lr"]) + 2) ** 2
        + abs(p["layers"] - 2)
        + {"relu": 0.0, "tanh": 0.5, None: 1.0}[p["activation"]]
        + p["batchnorm"]
    )


def regret_table() -> list[dict]:
    branin = get_problem("branin")
    print(
        "| setting | Branin log10 regret, 40 calls, seeds 0-2 | mixed best value, 25 calls, "
        "seeds 10-13 |"
    )
    print("| --- | --- | --- |")
    rows = []
    for label, name, params in REGRET_SETTINGS:
        regrets = [
            math.log10(
                max(
                    branin.regret(
                        minimize(
                            branin,
                            branin.space,
                            n_calls=40,
                            surrogate=name,
                            surrogate_params=params,
                            n_candidates=10_000,
                            random_state=seed,
                        ).fun
                    ),
                    1e-12,
                )
            )
            for seed in range(3)
        ]
        mixed = [
            minimize(
                _mixed,
                _MIXED_SPACE,
                n_calls=25,
                surrogate=name,
                surrogate_params=params,
                n_candidates=1000,
                random_state=seed,
            ).fun
            for seed in range(10, 14)
        ]
        print(
            f"| {label} | {', '.join(f'{r:.2f}' for r in regrets)} | "
            f"{', '.join(f'{v:.4f}' for v in mixed)} |",
            flush=True,
        )
        rows.append(dict(setting=label, surrogate=name, params=params, branin=regrets, mixed=mixed))
    return rows


N_TEST = 2_000
N_CANDIDATES = 50_000
Z90 = norm.ppf(0.95)


def quality(name: str, params: dict, n_train: int, seeds: int) -> dict:
    rows = []
    for seed in range(seeds):
        X, y = make_friedman1(n_samples=n_train + N_TEST, noise=1.0, random_state=seed)
        start = time.perf_counter()
        model = make_surrogate(name, random_state=seed, **params).fit(X[:n_train], y[:n_train])
        fit = time.perf_counter() - start
        p = model.predict_dist(X[n_train:])
        held_out = y[n_train:]
        std = np.maximum(p.std, 1e-12)
        rows.append(
            [
                -norm.logpdf(held_out, p.mean, std).mean(),
                np.sqrt(np.mean((held_out - p.mean) ** 2)),
                np.mean(np.abs(held_out - p.mean) <= Z90 * std),
                fit,
            ]
        )
    rows = np.array(rows)
    return dict(
        nll=rows[:, 0].mean(),
        rmse=rows[:, 1].mean(),
        coverage90=rows[:, 2].mean(),
        coverage90_min=rows[:, 2].min(),
        coverage90_max=rows[:, 2].max(),
        fit=rows[:, 3].mean(),
    )


def iteration_cost(
    name: str, params: dict, repeats: int, rng: np.random.Generator
) -> tuple[float, float]:
    """Median seconds of fit(N=200, D=6) + predict_dist(50,000), and of the reference."""
    X, y = make_friedman1(n_samples=200, n_features=6, noise=1.0, random_state=0)
    times, reference = [], []
    for repeat in range(repeats):
        C = rng.random((N_CANDIDATES, 6))
        start = time.perf_counter()
        ExtraTreesRegressor(n_estimators=100).fit(X, y).predict(C)
        reference.append(time.perf_counter() - start)
        start = time.perf_counter()
        make_surrogate(name, random_state=repeat, **params).fit(X, y).predict_dist(C)
        times.append(time.perf_counter() - start)
    return statistics.median(times), statistics.median(reference)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[200], help="training sizes N for the quality table"
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3, help="repeats of the cost timing")
    parser.add_argument(
        "--only",
        nargs="+",
        default=None,
        help="registry names to run (baselines included only if named)",
    )
    parser.add_argument("--no-time", action="store_true", help="skip the cost timing")
    parser.add_argument(
        "--regret",
        action="store_true",
        help="run the short SMBO comparison instead of the settings table",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).parent
        / "results"
        / "ngboost_bart_settings"
        / "ngboost_bart_settings.json",
    )
    args = parser.parse_args()
    if args.regret:
        rows = regret_table()
        out = args.out.with_name(args.out.stem + "_regret.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rows, indent=1))
        print(f"\nwrote {out}")
        return

    settings = [s for s in SETTINGS if args.only is None or s[1] in args.only]
    rng = np.random.default_rng(0)
    print(
        f"treebo {treebo.__version__}, scikit-learn {sklearn.__version__}, "
        f"{platform.processor() or platform.machine()}"
    )
    print(
        f"Friedman-1, 10 features, noise s.d. 1; {N_TEST} held-out points; {args.seeds} seeds. "
        "Cost: fit N=200, D=6 + predict 50,000; ratio = cost / bare "
        "ExtraTreesRegressor(100).fit+predict(50,000), same run.\n"
    )
    header = "| setting | N | NLL | RMSE | 90% coverage (min-max) | fit s |"
    if not args.no_time:
        header += " cost s | ratio |"
    print(header)
    print("| --- " + "| ---: " * (header.count("|") - 2) + "|")
    results = []
    for label, name, params in settings:
        cost = None if args.no_time else iteration_cost(name, params, args.repeats, rng)
        for n_train in args.sizes:
            q = quality(name, params, n_train, args.seeds)
            row = (
                f"| {label} | {n_train} | {q['nll']:.3f} | {q['rmse']:.3f} | "
                f"{q['coverage90']:.3f} ({q['coverage90_min']:.3f}-{q['coverage90_max']:.3f})"
                f" | {q['fit']:.2f} |"
            )
            record = dict(setting=label, surrogate=name, params=params, N=n_train, **q)
            if cost is not None:
                row += f" {cost[0]:.2f} | {cost[0] / cost[1]:.2f} |"
                record.update(cost=cost[0], reference=cost[1], ratio=cost[0] / cost[1])
            print(row, flush=True)
            results.append(record)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(dict(seeds=args.seeds, rows=results), indent=1))
    print(f"\nwrote {args.out}")


if __name__ == "__main__":
    main()

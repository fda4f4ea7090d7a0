"""
Best value so far: BwO against random search
=============================================

A short run on the Branin function (known minimum 0.397887) with the BwO
forest, the random forest and uniform random search, each from the same
five initial points, and the best value found so far after each evaluation.
The runs are kept small (25 evaluations, 2,000 candidates per proposal) so
that the documentation builds quickly; the benchmark pages have the full grids.
"""

import matplotlib.pyplot as plt
import numpy as np

from treebo import Optimizer, minimize
from treebo.problems import get_problem

branin = get_problem("branin")
runs = {}
for surrogate in ("bwo", "rf"):
    res = minimize(
        branin, branin.space, surrogate=surrogate, n_calls=25, n_candidates=2000, random_state=0
    )
    runs[surrogate] = np.minimum.accumulate(res.func_vals)

rng = np.random.default_rng(0)
initial = Optimizer(branin.space, random_state=0).ask(5)  # the 5 points minimize starts from
random_values = [branin(p) for p in initial + branin.space.sample(20, rng)]
runs["random"] = np.minimum.accumulate(random_values)

fig, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
for name, best in runs.items():
    ax.plot(np.arange(1, len(best) + 1), np.log10(best - branin.optimal_value), label=name)
ax.axvline(5.5, color="0.6", lw=0.8, ls=":")
ax.set_xlabel("evaluations (the first 5: the shared initial design)")
ax.set_ylabel("log10 (best value - minimum)")
ax.legend(frameon=False)
for name, best in runs.items():
    print(f"{name:>6}: best value {best[-1]:.5f}")

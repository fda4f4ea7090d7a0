"""
Epistemic and aleatoric variance
================================

Every treebo surrogate returns a :class:`~treebo.Prediction` whose variance is
split by the law of total variance into an *epistemic* part (the ensemble
members disagree: little data) and an *aleatoric* part (the members' own
variance: noise). Here a BwO forest is fitted on 60 points of a function whose
noise grows with ``x`` and which has no data between 0.4 and 0.6.
"""

import matplotlib.pyplot as plt
import numpy as np

from treebo.surrogates import make_surrogate

rng = np.random.default_rng(0)
x = rng.random(80)
x = x[(x < 0.4) | (x > 0.6)][:60]
y = np.sin(6 * x) + (0.02 + 0.3 * x) * rng.standard_normal(x.size)

model = make_surrogate("bwo", random_state=0).fit(x[:, None], y)
grid = np.linspace(0, 1, 401)
p = model.predict_dist(grid[:, None])

fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 5.5), sharex=True, layout="constrained")
top.plot(x, y, "k.", ms=4, label="data")
top.plot(grid, p.mean, color="#d62728", label="mean")
top.fill_between(
    grid,
    p.mean - 1.96 * p.std,
    p.mean + 1.96 * p.std,
    color="#d62728",
    alpha=0.2,
    lw=0,
    label="mean ± 1.96 sd",
)
top.legend(frameon=False, fontsize=8)
bottom.plot(grid, p.epistemic, label="epistemic (trees disagree)")
bottom.plot(grid, p.aleatoric, label="aleatoric (leaf variances)")
bottom.set_xlabel("x")
bottom.set_ylabel("variance")
bottom.legend(frameon=False, fontsize=8)

# %%
# The epistemic part peaks in the gap without data; the aleatoric part follows
# the noise, which grows to the right.
gap = (grid > 0.45) & (grid < 0.55)
print(
    f"mean epistemic variance in the gap {p.epistemic[gap].mean():.3f}, "
    f"elsewhere {p.epistemic[~gap].mean():.3f}"
)

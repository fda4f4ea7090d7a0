"""
Quickstart: minimize the Branin function
========================================

Minimize the Branin function with a BwO-forest surrogate and print the
progress, the best point and the time per iteration. From a checkout::

    pip install . && python examples/quickstart.py
"""

import math

from treebo import Real, minimize


def branin(x):
    x1, x2 = x
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


if __name__ == "__main__":
    result = minimize(
        branin,
        [Real(-5, 10, name="x1"), Real(0, 15, name="x2")],
        surrogate="bwo",
        n_calls=60,
        random_state=0,
        verbose=True,
    )
    regret = result.fun - 5 / (4 * math.pi)
    print(
        f"best value {result.fun:.5f} (global minimum 0.39789, regret {regret:.2e}) "
        f"at {[round(v, 4) for v in result.x]}"
    )
    print(
        f"median seconds per model-based iteration: fit "
        f"{sorted(result.fit_time[5:])[len(result.fit_time[5:]) // 2]:.3f}, acquisition "
        f"{sorted(result.acq_time[5:])[len(result.acq_time[5:]) // 2]:.3f}"
    )

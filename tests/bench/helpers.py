"""What the benchmark-grid tests share: fast run settings and hand-made records."""

import json

# Small runs: few candidates, small forests.
FAST = {"n_candidates": 256, "surrogate_params": {"n_estimators": 10}}


def fake_record(problem, surrogate, seed, regret, optimal_value=0.0, times=None, preset="default"):
    """A record as run_one writes it, with the given best-so-far regret per evaluation."""
    n = len(regret)
    best = [r + optimal_value for r in regret] if optimal_value is not None else list(regret)
    times = times if times is not None else [0.0] * 5 + [0.1] * (n - 5)
    return {
        "key": json.dumps([problem, {}, surrogate, seed, preset, {}]),
        "problem": problem,
        "surrogate": surrogate,
        "seed": seed,
        "preset": preset,
        "n_calls": n,
        "n_evaluated": n,
        "n_initial": 5,
        "optimal_value": optimal_value,
        "best_so_far": best,
        "values": best,
        "regret": list(regret) if optimal_value is not None else None,
        "fit_time": times,
        "acq_time": [0.0] * n,
    }

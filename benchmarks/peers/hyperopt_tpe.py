"""hyperopt's TPE: ``fmin(algo=tpe.suggest)``.

The initial design goes in as ``points_to_evaluate`` and ``n_startup_jobs``
is set to its size. A conditional space is refused: hyperopt's nested
``hp.choice`` cannot express a condition on an integer or on several parents
without duplicating dimensions.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from treebo.space import Binary, Categorical, Integer, Real, Space

from .protocol import PeerRun, refuse_conditions


def _hyperopt_space(space: Space) -> dict:
    from hyperopt import hp

    out = {}
    for dim in space.dimensions:
        name = dim.name
        if isinstance(dim, Real):
            if dim.prior == "log-uniform":
                out[name] = hp.loguniform(name, math.log(dim.low), math.log(dim.high))
            else:
                out[name] = hp.uniform(name, dim.low, dim.high)
        elif isinstance(dim, Integer):
            if dim.prior == "log-uniform":
                out[name] = hp.qloguniform(name, math.log(dim.low), math.log(dim.high), 1)
            else:
                out[name] = hp.uniformint(name, dim.low, dim.high)
        elif isinstance(dim, Binary):
            out[name] = hp.choice(name, [0, 1])
        elif isinstance(dim, Categorical):
            out[name] = hp.choice(name, list(range(len(dim.categories))))
        else:
            raise TypeError(f"unsupported dimension {dim!r}")
    return out


def run_hyperopt(run: PeerRun, seed: int) -> dict:
    """hyperopt's TPE on ``run``; return the settings to record."""
    refuse_conditions(
        run.space,
        "this mapping gives hyperopt flat hp.* expressions, not the "
        "nested hp.choice tree its conditional spaces need",
    )
    from hyperopt import fmin, tpe

    arguments = {"n_startup_jobs": run.n_initial}
    fmin(
        lambda params: run(run.point([params[n] for n in run.space.names])),
        _hyperopt_space(run.space),
        algo=functools.partial(tpe.suggest, **arguments),
        max_evals=run.n_calls - len(run.x0),
        rstate=np.random.default_rng(int(seed)),
        points_to_evaluate=[run.library_dict(p) for p in run.x0],
        verbose=False,
        show_progressbar=False,
    )
    return {
        "call": "hyperopt.fmin(algo=tpe.suggest)",
        "arguments": {
            **arguments,
            "max_evals": run.n_calls - len(run.x0),
            "rstate": "numpy.random.default_rng(seed)",
        },
        "x0": "treebo initial design (points_to_evaluate)",
    }

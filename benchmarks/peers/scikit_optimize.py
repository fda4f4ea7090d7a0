"""scikit-optimize: ``forest_minimize`` (extra trees or random forest) and ``gp_minimize``.

Acquisition EI for every method (``gp_minimize``'s default is ``gp_hedge``);
the initial design goes in as ``x0`` with ``n_initial_points=0``.
scikit-optimize has no conditional dimensions, so a conditional space is
refused.
"""

from __future__ import annotations

from typing import Any

from treebo.space import Binary, Categorical, Integer, Real, Space

from .protocol import PeerRun, refuse_conditions


def _skopt_dimensions(space: Space) -> list:
    from skopt import space as sk

    out = []
    for dim in space.dimensions:
        if isinstance(dim, Real):
            out.append(sk.Real(dim.low, dim.high, prior=dim.prior, name=dim.name))
        elif isinstance(dim, Integer):
            out.append(sk.Integer(dim.low, dim.high, prior=dim.prior, name=dim.name))
        elif isinstance(dim, Binary):
            out.append(sk.Categorical([0, 1], name=dim.name))
        elif isinstance(dim, Categorical):
            out.append(sk.Categorical(list(range(len(dim.categories))), name=dim.name))
        else:
            raise TypeError(f"unsupported dimension {dim!r}")
    return out


def run_skopt(run: PeerRun, seed: int, *, method: str, **kwargs: Any) -> dict:
    """scikit-optimize's ``method`` (with ``kwargs``) on ``run``; return the settings to record."""
    refuse_conditions(run.space, "scikit-optimize's dimensions have no conditions")
    import skopt

    minimize = getattr(skopt, method)
    arguments = {
        "n_calls": run.n_calls,
        "n_initial_points": 0,
        "acq_func": "EI",
        "random_state": int(seed),
        **kwargs,
    }
    minimize(
        lambda values: run(run.point(values)),
        _skopt_dimensions(run.space),
        x0=[run.library_point(p) for p in run.x0],
        **arguments,
    )
    return {"call": f"skopt.{method}", "arguments": arguments, "x0": "treebo initial design"}

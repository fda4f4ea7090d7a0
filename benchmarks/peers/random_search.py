"""Uniform random search: ``Space.sample`` from ``numpy.random.default_rng(seed)``.

It respects conditional spaces (``Space.sample`` draws only active values).
"""

from __future__ import annotations

import numpy as np

from .protocol import PeerRun


def run_random(run: PeerRun, seed: int) -> dict:
    """Uniform random proposals after the given points; return the settings to record."""
    rng = np.random.default_rng(seed)
    for point in run.x0:
        run(point)
    while len(run.x) < run.n_calls:
        run(run.space.sample(1, rng)[0])
    return {
        "sampler": "treebo Space.sample(1, rng) per proposal",
        "rng": "numpy.random.default_rng(seed)",
    }

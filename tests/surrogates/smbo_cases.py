"""Easy objectives on each kind of space, shared by the surrogates' short ``minimize`` tests.

Each surrogate's test checks that 25 calls do better than its 5-point initial
design, with bounds measured for that surrogate.
"""

import math

import numpy as np

from treebo import Binary, Categorical, Integer, Real

WEIGHTS = np.random.default_rng(0).normal(size=12)  # the optimum of linear_bits is -3.260
MIXED_SPACE = {
    "lr": Real(1e-4, 1.0, prior="log-uniform"),
    "layers": Integer(1, 4),
    "activation": Categorical(["relu", "tanh", None]),
    "batchnorm": Binary(),
}
SPHERE_SPACE = [Real(-1, 1)] * 3
BITS_SPACE = [Binary()] * 12


def sphere(x):
    return float(sum((v - 0.3) ** 2 for v in x))


def linear_bits(bits):
    return float(WEIGHTS @ np.asarray(bits, dtype=float))


def mixed(p):
    # Minimum 0 at lr = 0.01, 2 layers, relu, no batchnorm.
    return (
        (math.log10(p["lr"]) + 2) ** 2
        + abs(p["layers"] - 2)
        + {"relu": 0.0, "tanh": 0.5, None: 1.0}[p["activation"]]
        + p["batchnorm"]
    )

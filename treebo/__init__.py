"""treebo: sequential model-based optimization with tree-ensemble surrogates.

>>> from treebo import minimize, Real
>>> res = minimize(lambda x: (x[0] - 0.3) ** 2, [Real(-1, 1)], n_calls=15, random_state=0)
>>> round(res.fun, 2)
0.0
"""

from .optimizer import Optimizer, OptimizeResult, SpaceExhausted, Trial, minimize
from .space import Binary, Categorical, Integer, Real, Space
from .surrogates import Prediction, available_surrogates, make_surrogate

__version__ = "0.1.0"

__all__ = [
    "minimize",
    "Optimizer",
    "OptimizeResult",
    "Trial",
    "SpaceExhausted",
    "Space",
    "Real",
    "Integer",
    "Categorical",
    "Binary",
    "make_surrogate",
    "available_surrogates",
    "Prediction",
    "__version__",
]

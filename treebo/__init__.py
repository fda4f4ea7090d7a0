"""treebo: sequential model-based optimization with tree-ensemble surrogates.

>>> from treebo import minimize, Real
>>> res = minimize(lambda x: (x[0] - 0.3) ** 2, [Real(-1, 1)], n_calls=15, random_state=0)
>>> round(res.fun, 2)
0.0
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "minimize",
    "minimize_multifidelity",
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
    "dump",
    "load",
    "__version__",
]

# Public name -> the submodule that defines it. The optimizer pulls in scikit-learn and
# SciPy's optimizers (most of a second), which `import treebo`, `treebo --help` and
# `treebo list` never need, so each name is imported on first use (PEP 562).
_LAZY_NAMES = {
    "minimize": "treebo.loop",
    "minimize_multifidelity": "treebo.multifidelity",
    "Optimizer": "treebo.optimizer",
    "OptimizeResult": "treebo.result",
    "Trial": "treebo.history",
    "SpaceExhausted": "treebo.space",
    "Space": "treebo.space",
    "Real": "treebo.space",
    "Integer": "treebo.space",
    "Categorical": "treebo.space",
    "Binary": "treebo.space",
    "make_surrogate": "treebo.surrogates",
    "available_surrogates": "treebo.surrogates",
    "Prediction": "treebo.surrogates",
    "dump": "treebo.results.io",
    "load": "treebo.results.io",
}

if TYPE_CHECKING:  # what type checkers and editors resolve the lazy names to
    from .history import Trial
    from .loop import minimize
    from .multifidelity import minimize_multifidelity
    from .optimizer import Optimizer
    from .result import OptimizeResult
    from .results.io import dump, load
    from .space import Binary, Categorical, Integer, Real, Space, SpaceExhausted
    from .surrogates import Prediction, available_surrogates, make_surrogate


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its submodule on first use."""
    try:
        module = _LAZY_NAMES[name]
    except KeyError:
        raise AttributeError(f"module 'treebo' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later look-ups no longer come here
    return value


def __dir__() -> list[str]:
    """Every public name, the ones not imported yet included."""
    return sorted(set(globals()) | set(__all__))

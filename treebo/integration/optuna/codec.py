"""How Optuna's distributions map to treebo's dimensions, and their values back and forth."""

from __future__ import annotations

import decimal
import logging
from collections.abc import Mapping
from typing import Any

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from ...space import Categorical, Dimension, Integer, Real

logger = logging.getLogger("treebo")


class Codec:
    """How the values of one Optuna distribution map to a treebo dimension and back.

    Float and int distributions without a step become ``Real`` and
    ``Integer`` (log-uniform when ``log``); a distribution with a step
    becomes ``Integer(0, n)`` over the grid index ``k`` of
    ``low + k * step`` (``n`` grid steps), so treebo sees the grid and never
    proposes a value off it; a categorical becomes ``Categorical`` over the
    choices' indices (Optuna's choices may repeat under ``==``, e.g. 1 and
    True, which treebo's categories refuse).

    Raises
    ------
    ValueError
        When treebo's dimensions cannot encode the distribution (an interval
        too narrow for float64, integer bounds beyond ``2**49``), or it is
        not a float, int or categorical distribution.
    """

    def __init__(self, name: str, distribution: BaseDistribution):
        if not isinstance(
            distribution, (CategoricalDistribution, IntDistribution, FloatDistribution)
        ):
            raise ValueError(
                f"{type(distribution).__name__} is not a float, int or categorical distribution"
            )
        self.distribution = distribution
        self.step: tuple[decimal.Decimal, decimal.Decimal] | None = None
        d = distribution
        if isinstance(d, CategoricalDistribution):
            self.dimension: Dimension = Categorical(range(len(d.choices)), name=name)
        elif isinstance(d, IntDistribution) and d.step == 1:
            self.dimension = Integer(d.low, d.high, log=bool(d.log), name=name)
        elif isinstance(d, IntDistribution):
            self.dimension = Integer(0, (d.high - d.low) // d.step, name=name)
            self.step = (decimal.Decimal(d.low), decimal.Decimal(d.step))
        elif isinstance(d, FloatDistribution) and d.step is None:
            self.dimension = Real(d.low, d.high, log=bool(d.log), name=name)
        else:
            # Decimal on the shortest repr: the grid values are then the ones
            # the user wrote (0.3, not 0.30000000000000004) and n is exact, as
            # Optuna's own adjustment of high to the grid computes it.
            low, step = decimal.Decimal(str(d.low)), decimal.Decimal(str(d.step))
            self.dimension = Integer(
                0, int((decimal.Decimal(str(d.high)) - low) // step), name=name
            )
            self.step = (low, step)

    def to_treebo(self, value: Any) -> Any:
        """The treebo value of the Optuna (external) ``value``."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return int(d.to_internal_repr(value))
        if self.step is not None:
            # The Decimals of the grid convert back to exactly d.low and d.step.
            low, step = self.step
            return int(round((float(value) - float(low)) / float(step)))
        if isinstance(d, IntDistribution):
            return int(value)
        return float(value)

    def to_optuna(self, value: Any) -> Any:
        """The Optuna (external) value of the treebo ``value``."""
        d = self.distribution
        if isinstance(d, CategoricalDistribution):
            return d.choices[int(value)]
        if self.step is not None:
            low, step = self.step
            on_grid = low + int(value) * step
            return int(on_grid) if isinstance(d, IntDistribution) else min(float(on_grid), d.high)
        if isinstance(d, IntDistribution):
            return int(value)
        return min(max(float(value), d.low), d.high)


def joint_codecs(search_space: Mapping[str, BaseDistribution]) -> dict[str, Codec]:
    """The codecs of the parameters treebo samples jointly: not single-valued, encodable."""
    codecs = {}
    for name, distribution in search_space.items():
        if distribution.single():
            continue
        try:
            codecs[name] = Codec(name, distribution)
        except ValueError as error:
            logger.debug("parameter %r is left to the independent sampler: %s", name, error)
    return codecs

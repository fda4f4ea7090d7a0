"""The random streams of a run: one seed, three independent generators.

A run's ``random_state`` is split into three streams so that changing one
part of the algorithm does not shift the others: the initial design, the
surrogate seeds, and the acquisition (candidates, tie-breaking, random
fallbacks). Their states are saved with a stored study, so a resumed run
continues each stream where it stopped.
"""

from __future__ import annotations

import numbers
from typing import Any, cast

import numpy as np

__all__ = ["RandomStreams"]


class RandomStreams:
    """The seed of a run and its design, model and acquisition streams.

    Three independent streams: the initial design, the surrogate seeds and the
    acquisition (candidates, tie-breaking, random fallbacks).

    Parameters
    ----------
    random_state : int >= 0, numpy.random.Generator, numpy.random.RandomState or None
        ``None`` draws fresh entropy and keeps it as the seed; a
        ``RandomState`` gives the run an int seed drawn from it.

    Attributes
    ----------
    seed : int or None
        The run's seed; ``None`` when a Generator was given.
    design_state : dict
        The initial state of the design stream (the design is drawn once).
    model, acquisition : numpy.random.Generator
        The surrogate-seed and acquisition streams.
    """

    def __init__(self, random_state: Any = None):
        self.seed, root = _root_generator(random_state)
        design, self.model, self.acquisition = root.spawn(3)
        self.design_state = design.bit_generator.state

    def design(self) -> np.random.Generator:
        """A fresh generator at the design stream's initial state."""
        return _generator(self.design_state)

    def states(self) -> dict:
        """The model and acquisition streams' current states (JSON-safe)."""
        return {
            "rng_model": self.model.bit_generator.state,
            "rng_acquisition": self.acquisition.bit_generator.state,
        }

    def restore(self, states: dict) -> None:
        """Set the model and acquisition streams to saved :meth:`states`.

        Parameters
        ----------
        states : dict
            As returned by :meth:`states`: the ``"rng_model"`` and
            ``"rng_acquisition"`` bit-generator states.

        Raises
        ------
        ValueError
            When a saved state is not one of an allowed bit generator.
        """
        self.model = _generator(states["rng_model"])
        self.acquisition = _generator(states["rng_acquisition"])

    def to_meta(self) -> dict:
        """Everything a stored study keeps of the streams."""
        return {"seed": self.seed, "rng_design": self.design_state, **self.states()}

    def load_meta(self, meta: dict) -> None:
        """Continue the streams of a stored study (:meth:`to_meta`).

        Parameters
        ----------
        meta : dict
            As returned by :meth:`to_meta`: the seed, the design stream's
            initial state and the other streams' states.

        Raises
        ------
        ValueError
            When a saved state is not one of an allowed bit generator.
        """
        _generator(meta["rng_design"])
        self.restore(meta)
        self.seed, self.design_state = meta["seed"], meta["rng_design"]


def _root_generator(random_state: Any) -> tuple[int | None, np.random.Generator]:
    """The run's seed (when it has one) and the generator its streams are spawned from.

    ``None`` draws fresh entropy and keeps it as the seed, so a study stored
    in SQLite can be reproduced even when no seed was given.
    """
    if random_state is None:
        # Without an argument, SeedSequence draws its entropy from the OS as one int.
        seed = int(cast(int, np.random.SeedSequence().entropy))
        return seed, np.random.default_rng(seed)
    if isinstance(random_state, np.random.RandomState):
        # scikit-learn and scikit-optimize users pass these: draw the run's seed from it.
        random_state = int(random_state.randint(np.iinfo(np.int32).max))
    if (
        isinstance(random_state, numbers.Integral)
        and not isinstance(random_state, bool)
        and int(random_state) >= 0
    ):
        return int(random_state), np.random.default_rng(int(random_state))
    if isinstance(random_state, np.random.Generator):
        return None, random_state
    if isinstance(random_state, (np.random.SeedSequence, np.random.BitGenerator)):
        return None, np.random.default_rng(random_state)
    raise ValueError(
        "random_state must be None, an int >= 0, a numpy.random.Generator or a "
        f"numpy.random.RandomState, got {random_state!r}"
    )


#: Bit generators a saved stream state may name. The name comes from a file, so it is
#: looked up here and never with ``getattr`` on ``numpy.random`` (there, the name
#: ``"test"`` would run numpy's test suite).
_BIT_GENERATORS = {
    "PCG64": np.random.PCG64,
    "PCG64DXSM": np.random.PCG64DXSM,
    "MT19937": np.random.MT19937,
    "Philox": np.random.Philox,
    "SFC64": np.random.SFC64,
}


def _generator(state: Any) -> np.random.Generator:
    """A generator whose bit generator is in the saved ``state``.

    Raises
    ------
    ValueError
        When ``state`` does not name an allowed bit generator or numpy refuses it.
    """
    name = state.get("bit_generator") if isinstance(state, dict) else None
    if not isinstance(name, str) or name not in _BIT_GENERATORS:
        raise ValueError(
            f"a saved random-stream state names the bit generator {name!r}; "
            f"expected one of {sorted(_BIT_GENERATORS)}"
        )
    bit_generator = _BIT_GENERATORS[name]()
    try:
        bit_generator.state = state
    except (TypeError, ValueError, KeyError) as error:
        raise ValueError(f"a saved random-stream state for {name} is invalid: {error}") from None
    return np.random.Generator(bit_generator)

"""Seeds of a trial's random streams: the proposal's and the independent sampler's draws."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import cast

import numpy as np

# Streams derived from (seed, trial number, purpose[, parameter]).
MODEL_STREAM, INDEPENDENT_STREAM = 0, 1


def stream_seed(
    seed: int, number: int, stream: int, words: Sequence[int] = (), dtype: type = np.uint64
) -> int:
    """A seed for one trial's stream, from the sampler's seed and the trial number only."""
    sequence = np.random.SeedSequence([seed, number, stream, *words])
    return int(sequence.generate_state(1, dtype)[0])


def name_words(name: str) -> list[int]:
    """Two 64-bit words of a digest of ``name``, to seed a stream per parameter."""
    # A stable digest: str hashes change from one process to the next.
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=16).digest()
    return [int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")]


def fresh_seed() -> int:
    """A seed drawn from fresh entropy."""
    # Without an argument, SeedSequence draws its entropy from the OS as one int.
    return int(cast(int, np.random.SeedSequence().entropy))

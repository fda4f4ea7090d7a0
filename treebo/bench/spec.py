"""One run of a benchmark grid, :class:`RunSpec`, and the key that identifies it.

The key is what resuming a grid and reading its records go by: records with
the same key are the same experiment, and a longer run extends a shorter one
as a prefix (a run's proposals depend only on its seed and history), so
``n_calls`` is not part of the key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

__all__ = ["RunSpec", "run_key"]


@dataclass
class RunSpec:
    """One run of a grid.

    Parameters
    ----------
    problem : str
        A name from :func:`~treebo.problems.available_problems`.
    surrogate : str
        A name from :func:`~treebo.surrogates.available_surrogates`.
    seed : int
        Repeat index ``r >= 0``; fixes the initial design (shared by all
        surrogates), the run's random state and, for binary problems, the
        instance.
    n_calls : int
        Evaluations, the initial design included.
    preset : {"default", "paper"}
    problem_params : dict
        Extra problem parameters (e.g. ``{"lam": 1e-4}``).
    overrides : dict
        :func:`~treebo.minimize` arguments that replace the preset's (e.g.
        ``{"n_candidates": 5000}``); JSON-serializable.
    """

    problem: str
    surrogate: str
    seed: int
    n_calls: int
    preset: str = "default"
    problem_params: dict = field(default_factory=dict)
    overrides: dict = field(default_factory=dict)

    def key(self) -> str:
        """Identity of the run, without ``n_calls``."""
        return run_key(
            self.problem,
            self.problem_params,
            self.surrogate,
            self.seed,
            self.preset,
            self.overrides,
        )


def run_key(
    problem: str, problem_params: dict, surrogate: str, seed: int, preset: str, overrides: dict
) -> str:
    """The key of a run from its parts, as :meth:`RunSpec.key` gives it.

    Also rebuilds the key of a record that lacks one from the record's fields.

    Parameters
    ----------
    problem : str
    problem_params : dict
    surrogate : str
    seed : int
    preset : str
    overrides : dict

    Returns
    -------
    str
        A JSON list of the parts, with sorted dictionary keys, so equal runs
        give equal strings.
    """
    return json.dumps(
        [problem, problem_params, surrogate, int(seed), preset, overrides],
        sort_keys=True,
        default=str,
    )

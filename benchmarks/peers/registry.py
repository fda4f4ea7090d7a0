"""The peers by name, and one run of a peer recorded like treebo's own runs.

To add a peer: write its adapter module (a ``run_<library>(run, seed, **options)
-> settings`` function driving the library on a :class:`~.protocol.PeerRun`)
and register it in :data:`PEERS` with the modules it imports.
"""

from __future__ import annotations

import datetime
import functools
import importlib.metadata
import importlib.util
import time
from collections.abc import Callable
from dataclasses import dataclass

from treebo.bench import (
    SCHEMA_VERSION,
    RunSpec,
    build_problem,
    default_n_calls,
    default_n_initial,
    timings,
    to_jsonable,
    trajectory,
    versions,
)
from treebo.problems import problem_family
from treebo.space import Space

from .hyperopt_tpe import run_hyperopt
from .optuna_samplers import run_optuna
from .protocol import PeerRun, UnsupportedSpace, initial_design
from .random_search import run_random
from .scikit_optimize import run_skopt
from .smac3 import run_smac

#: Evaluations per run of the binary problems (the 5 initial points included).
BINARY_N_CALLS = 55
#: How to install the peers' libraries.
INSTALL = "pip install 'treebo[peers]'"


@dataclass(frozen=True)
class Peer:
    """A peer optimizer: what it imports (module -> distribution), how it runs, and
    whether it runs on conditional spaces (``conditional``)."""

    name: str
    requires: dict
    run: Callable[[PeerRun, int], dict]
    conditional: bool = False

    def check_space(self, space: Space) -> None:
        """Raise :class:`UnsupportedSpace` if this peer cannot run on ``space``."""
        if space.conditional and not self.conditional:
            supported = [name for name, peer in PEERS.items() if peer.conditional]
            raise UnsupportedSpace(
                f"peer {self.name} does not support conditional search "
                f"spaces (dimensions with active_if); peers that do: "
                f"{supported}"
            )

    def missing(self) -> list[str]:
        """Distributions of the modules this peer needs that cannot be imported."""
        return [
            dist
            for module, dist in self.requires.items()
            if importlib.util.find_spec(module) is None
        ]

    def versions(self) -> dict[str, str]:
        return {dist: importlib.metadata.version(dist) for dist in self.requires.values()}


PEERS: dict[str, Peer] = {
    peer.name: peer
    for peer in [
        Peer("random", {}, run_random, conditional=True),
        Peer(
            "optuna_tpe",
            {"optuna": "optuna"},
            functools.partial(run_optuna, sampler="TPESampler"),
            conditional=True,
        ),
        Peer("hyperopt_tpe", {"hyperopt": "hyperopt"}, run_hyperopt),
        Peer(
            "skopt_et",
            {"skopt": "scikit-optimize"},
            functools.partial(run_skopt, method="forest_minimize", base_estimator="ET"),
        ),
        Peer(
            "skopt_rf",
            {"skopt": "scikit-optimize"},
            functools.partial(run_skopt, method="forest_minimize", base_estimator="RF"),
        ),
        Peer("smac_rf", {"smac": "smac", "ConfigSpace": "ConfigSpace"}, run_smac, conditional=True),
        Peer(
            "optuna_gp",
            {"optuna": "optuna", "torch": "torch"},
            functools.partial(run_optuna, sampler="GPSampler"),
            conditional=True,
        ),
        Peer(
            "skopt_gp",
            {"skopt": "scikit-optimize"},
            functools.partial(run_skopt, method="gp_minimize"),
        ),
        Peer(
            "optuna_cmaes",
            {"optuna": "optuna", "cmaes": "cmaes"},
            functools.partial(run_optuna, sampler="CmaEsSampler"),
        ),
    ]
}


def peer_n_calls(problem: str) -> int:
    """Default evaluations per run: 55 for the binary problems, treebo's default otherwise."""
    return BINARY_N_CALLS if problem_family(problem) == "binary" else default_n_calls(problem)


def run_peer(peer: str, problem: str, seed: int, n_calls: int | None = None) -> dict:
    """Run one peer on one problem from one seed and return its record.

    Parameters
    ----------
    peer : str
        A name from :data:`PEERS`.
    problem : str
        A registered problem name (binary problems get seed ``seed``'s instance).
    seed : int
        Repeat index: the initial design and the library's seed.
    n_calls : int, optional
        Evaluations, the initial points included (default :func:`peer_n_calls`).

    Returns
    -------
    dict
        A record in :func:`treebo.bench.run_one`'s layout, ``surrogate=peer``.

    Raises
    ------
    ImportError
        If the peer's library is missing (the message names the extra).
    UnsupportedSpace
        If the problem's space is conditional and the peer does not support
        that (before anything is evaluated).
    """
    if peer not in PEERS:
        raise ValueError(f"unknown peer {peer!r}; choose from {list(PEERS)}")
    entry = PEERS[peer]
    missing = entry.missing()
    if missing:
        raise ImportError(f"peer {peer} needs {', '.join(missing)}; install with: {INSTALL}")
    n_calls = peer_n_calls(problem) if n_calls is None else int(n_calls)
    n_initial = default_n_initial(problem)
    if n_calls <= n_initial:
        raise ValueError(
            f"n_calls must be larger than the {n_initial} initial points, got {n_calls!r}"
        )
    spec = RunSpec(problem=problem, surrogate=peer, seed=int(seed), n_calls=n_calls)
    instance = build_problem(spec)
    entry.check_space(instance.space)
    run = PeerRun(instance, initial_design(instance, spec.seed, n_initial), n_calls)
    started = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    wall = time.perf_counter()
    settings = entry.run(run, spec.seed)
    wall = time.perf_counter() - wall
    if len(run.x) != n_calls:
        raise RuntimeError(f"{peer} evaluated {len(run.x)} points, not n_calls={n_calls}")

    values, best_so_far, regret = trajectory(run.values, instance.optimal_value)
    f_star = instance.optimal_value
    return to_jsonable(
        {
            "schema": SCHEMA_VERSION,
            "key": spec.key(),
            "problem": problem,
            "problem_params": {},
            "instance_params": instance.params,
            "surrogate": peer,
            "seed": spec.seed,
            "preset": spec.preset,
            "overrides": {},
            "n_calls": n_calls,
            "n_evaluated": len(values),
            "n_initial": n_initial,
            "optimal_value": f_star,
            "regret_floor": getattr(instance, "regret_floor", None),
            "x": run.x if getattr(instance, "record_points", True) else None,
            "values": values,
            "best_so_far": best_so_far,
            "regret": regret,
            "fit_time": [0.0] * len(values),
            "acq_time": timings(run.acq_time),
            "eval_time": timings(run.eval_time),
            "errors": [],
            "settings": {
                "peer": peer,
                "n_initial_points": n_initial,
                "random_state": spec.seed,
                **settings,
            },
            "versions": {**versions(), **entry.versions()},
            "started": started,
            "wall_time": wall,
            "message": f"{peer}: {n_calls} evaluations ({n_initial} given, "
            f"{n_calls - n_initial} proposed)",
        }
    )

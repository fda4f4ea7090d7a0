"""SMAC3's ``HyperparameterOptimizationFacade`` (its random forest), ask and tell.

Told that the objective is deterministic and retraining its forest after
every evaluation (``retrain_after=1``, as SMAC's black-box facade does; its
hyperparameter facade's 8 would make 7 of every 8 proposals from a stale
model). The initial design goes in as ``additional_configs`` with
``n_configs=0``. Conditional spaces get ConfigSpace conditions: an
``EqualsCondition`` (one allowed value) or ``InCondition`` (several) per
parent and an ``AndConjunction`` of them for several parents; its
configurations, given and proposed, hold the active hyperparameters only.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path
from typing import Any

from treebo.space import Binary, Categorical, Integer, Real, Space

from .protocol import PeerRun, library_conditions


def _configspace(space: Space, seed: int) -> Any:
    from ConfigSpace import Categorical as CSCategorical
    from ConfigSpace import ConfigurationSpace, Float
    from ConfigSpace import Integer as CSInteger

    cs = ConfigurationSpace(seed=int(seed))
    for dim in space.dimensions:
        if isinstance(dim, Real):
            cs.add(Float(dim.name, (dim.low, dim.high), log=dim.prior == "log-uniform"))
        elif isinstance(dim, Integer):
            cs.add(CSInteger(dim.name, (dim.low, dim.high), log=dim.prior == "log-uniform"))
        elif isinstance(dim, Binary):
            cs.add(CSCategorical(dim.name, [0, 1]))
        elif isinstance(dim, Categorical):
            cs.add(CSCategorical(dim.name, list(range(len(dim.categories)))))
        else:
            raise TypeError(f"unsupported dimension {dim!r}")
    if space.conditional:
        cs.add(_configspace_conditions(cs, space))
    return cs


def _configspace_conditions(cs: Any, space: Space) -> list:
    """One ConfigSpace condition per conditional dimension: its ``active_if``.

    ``EqualsCondition`` for one allowed value of a parent, ``InCondition`` for
    several, an ``AndConjunction`` of them for several parents; values are
    the parents' hyperparameter values (category indices, ints). A parent's
    own condition makes its children inactive with it, as in treebo.
    """
    from ConfigSpace import AndConjunction, EqualsCondition, InCondition

    out = []
    for dim, conditions in library_conditions(space):
        parts = [
            EqualsCondition(cs[dim.name], cs[parent], allowed[0])
            if len(allowed) == 1
            else InCondition(cs[dim.name], cs[parent], allowed)
            for parent, allowed in conditions
        ]
        if parts:
            out.append(parts[0] if len(parts) == 1 else AndConjunction(*parts))
    return out


def _ask_and_tell_only(config: Any, seed: int = 0) -> float:
    raise RuntimeError("this SMAC instance is driven by ask and tell")


def run_smac(run: PeerRun, seed: int) -> dict:
    """SMAC3's random-forest facade on ``run``, ask and tell; return the settings to record."""
    cs = _configspace(run.space, seed)
    workdir = Path(tempfile.mkdtemp(prefix="treebo-peers-smac-"))
    with warnings.catch_warnings():
        # SMAC 2.4 calls ConfigSpace's deprecated Configuration.get_dictionary
        warnings.simplefilter("ignore", DeprecationWarning)
        # and its local search logs np.mean of an empty list of timings when it
        # stops at once (seen on conditional spaces); the mean is only logged
        warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)
        warnings.filterwarnings(
            "ignore", "invalid value encountered in scalar divide", RuntimeWarning
        )
        try:
            _smac_loop(run, seed, cs, workdir)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    settings = {
        "call": "smac.HyperparameterOptimizationFacade ask/tell",
        "arguments": {
            "deterministic": True,
            "n_trials": run.n_calls,
            "seed": int(seed),
            "initial_design": "n_configs=0, additional_configs=x0",
            "config_selector": "retrain_after=1",
        },
        "x0": "treebo initial design",
    }
    if run.space.conditional:
        settings["conditions"] = (
            "ConfigSpace EqualsCondition/InCondition, AndConjunction for "
            "several parents; configurations hold the active values only"
        )
    return settings


def _smac_loop(run: PeerRun, seed: int, cs: Any, workdir: Path) -> None:
    from ConfigSpace import Configuration
    from smac import HyperparameterOptimizationFacade as HPO
    from smac import Scenario
    from smac.runhistory.dataclasses import TrialValue

    scenario = Scenario(
        cs,
        deterministic=True,
        n_trials=run.n_calls,
        seed=int(seed),
        output_directory=workdir / "smac3_output",
    )
    given = [Configuration(cs, values=run.library_dict(p)) for p in run.x0]
    smac = HPO(
        scenario,
        _ask_and_tell_only,
        initial_design=HPO.get_initial_design(scenario, n_configs=0, additional_configs=given),
        config_selector=HPO.get_config_selector(scenario, retrain_after=1),
        overwrite=True,
        logging_level=40,
    )
    while len(run.x) < run.n_calls:
        info = smac.ask()
        if run.space.conditional:  # a Configuration leaves its inactive hyperparameters out
            value = run(run.active_point(dict(info.config)))
        else:
            value = run(run.point([info.config[name] for name in run.space.names]))
        smac.tell(info, TrialValue(cost=value))

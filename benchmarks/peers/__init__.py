"""Peer optimizers on treebo's benchmark problems, recorded like treebo's own runs.

Runs other libraries' optimizers on the problems of :mod:`treebo.problems`
with the budgets, seeds and initial points of treebo's ``default`` grid
(:mod:`treebo.bench`), and appends one record per run to
``<out>/<problem>.jsonl`` in the layout of :func:`treebo.bench.run_one`,
with the peer's name in ``surrogate``. ``treebo summary OUT`` and
``treebo plot OUT`` then show the peers beside treebo's surrogates. From the
repository root::

    python -m benchmarks.peers --problems continuous --peers random skopt_et \\
        --seeds 0-9 --out benchmarks/results/regret/grid

Peers (``pip install 'treebo[peers]'`` installs their libraries), one module
per library:

``random``        uniform random search (:mod:`.random_search`)
``skopt_et``      scikit-optimize ``forest_minimize(base_estimator="ET", acq_func="EI")``
``skopt_rf``      scikit-optimize ``forest_minimize(base_estimator="RF", acq_func="EI")``
``skopt_gp``      scikit-optimize ``gp_minimize(acq_func="EI")`` (:mod:`.scikit_optimize`)
``smac_rf``       SMAC3 ``HyperparameterOptimizationFacade``, ask and tell (:mod:`.smac3`)
``optuna_tpe``    Optuna ``TPESampler``, ask and tell
``optuna_gp``     Optuna ``GPSampler`` (needs torch), ask and tell
``optuna_cmaes``  Optuna ``CmaEsSampler`` (needs ``cmaes``), ask and tell (:mod:`.optuna_samplers`)
``hyperopt_tpe``  hyperopt ``fmin(algo=tpe.suggest)`` (:mod:`.hyperopt_tpe`)

:mod:`.protocol` holds what every peer shares: the initial points, seeding,
times, the mapping of treebo's dimensions and conditions to the libraries';
:mod:`.registry` the peers by name and the record of one run; :mod:`.cli`
the command line. Otherwise the libraries run at their defaults, except
where each adapter's docstring says. Budgets:
:func:`treebo.bench.default_n_calls` (100 for continuous problems, 50 for the
model-selection ones, 20 per dimension for COCO's bbob problems), 55 for the
binary ones.

Conditional spaces (``active_if``) run with ``random``, ``optuna_tpe``,
``optuna_gp`` and ``smac_rf``, each through its library's own mechanism. The
skopt peers, ``optuna_cmaes`` and ``hyperopt_tpe`` refuse a conditional
space before evaluating anything (:class:`UnsupportedSpace`, naming the peer;
the command line skips that peer on that problem and exits 1).

COCO's bbob problems (``bbob_f01_d10_i1``; ``pip install 'treebo[bbob]'``)
are chosen by name or with ``--problems bbob`` and ``--functions``,
``--dims`` and ``--instances`` (by default the protocol's: functions 1-24,
dimensions 2, 5, 10, instances 1-3), as with ``treebo bench``::

    python -m benchmarks.peers --problems bbob --dims 2 5 --instances 1-3 --seeds 0-2 \\
        --peers random optuna_tpe optuna_cmaes --out benchmarks/results/bbob
"""

from .cli import DEFAULT_OUT, main, run_all, single_thread
from .protocol import (
    PeerRun,
    UnsupportedSpace,
    initial_design,
    is_active,
    library_conditions,
    refuse_conditions,
    refuse_non_numeric,
)
from .registry import BINARY_N_CALLS, INSTALL, PEERS, Peer, peer_n_calls, run_peer

__all__ = [
    "BINARY_N_CALLS",
    "DEFAULT_OUT",
    "INSTALL",
    "PEERS",
    "Peer",
    "PeerRun",
    "UnsupportedSpace",
    "initial_design",
    "is_active",
    "library_conditions",
    "main",
    "peer_n_calls",
    "refuse_conditions",
    "refuse_non_numeric",
    "run_all",
    "run_peer",
    "single_thread",
]

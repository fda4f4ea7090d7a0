"""Benchmark problems, by name.

>>> from treebo.problems import get_problem
>>> branin = get_problem("branin")
>>> round(branin([3.141592653589793, 2.275]), 6)
0.397887
>>> get_problem("ising", instance=466, lam=0.01).optimal_value  # doctest: +ELLIPSIS
0.20106887159...

Families (``problem_family``): ``"continuous"`` (the paper's six functions and
six more multimodal ones with known optima, ``multimodal.py``), ``"binary"``
(Ising sparsification and contamination control, one instance per case seed)
and ``"mixed"`` (AutoML on scikit-learn's bundled data sets: the paper's flat
problem, ``automl_*``, and the conditional model selection over six model
families, ``model_selection_*``, ``model_selection.py``).

:func:`problem_groups` gives the paper's problems by family;
:func:`problem_suites` adds the named selections ``"continuous_all"`` (all
twelve continuous functions) and ``"model_selection"`` (the conditional
model selection on its three data sets), which ``treebo bench --problems``
accepts as one word.

COCO's ``bbob`` functions (:mod:`treebo.problems.bbob`, family
``"continuous"``) are named by function, dimension and instance, e.g.
``bbob_f01_d10_i1``; every such name is accepted without being listed by
:func:`available_problems`, and :func:`select_problems` expands the word
``"bbob"`` to a selection of them (the benchmark protocol's by default).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .automl import AUTOML_CLASSIFIERS, AUTOML_DATASETS, AutoML, DatasetUnavailable
from .base import Problem
from .bbob import BBOB, bbob_problem_names, bbob_summary, is_bbob_name, parse_bbob_name
from .binary import (
    PAPER_CASE_SEEDS,
    Contamination,
    Ising,
    paper_case_seed,
)
from .continuous import Ackley, Bohachevsky, Branin, Hartmann6, Michalewicz, Rosenbrock
from .model_selection import MODEL_SELECTION_DATASETS, MODEL_SELECTION_FAMILIES, ModelSelection
from .multimodal import Hartmann3, Levy, Rastrigin, Schwefel, Shekel, StyblinskiTang

__all__ = [
    "Problem",
    "get_problem",
    "available_problems",
    "problem_family",
    "problem_summary",
    "problem_groups",
    "problem_suites",
    "select_problems",
    "Ackley",
    "Bohachevsky",
    "Branin",
    "Hartmann6",
    "Michalewicz",
    "Rosenbrock",
    "Hartmann3",
    "Shekel",
    "Levy",
    "Rastrigin",
    "Schwefel",
    "StyblinskiTang",
    "Ising",
    "Contamination",
    "AutoML",
    "DatasetUnavailable",
    "PAPER_CASE_SEEDS",
    "paper_case_seed",
    "AUTOML_CLASSIFIERS",
    "AUTOML_DATASETS",
    "ModelSelection",
    "MODEL_SELECTION_DATASETS",
    "MODEL_SELECTION_FAMILIES",
    "BBOB",
    "bbob_problem_names",
]


@dataclass(frozen=True)
class _Entry:
    factory: Callable[..., Problem]
    family: str  # "continuous", "binary" or "mixed"
    summary: str
    in_paper: bool = True  # one of Kim & Choi's experiments (the families of `problem_groups`)


_REGISTRY: dict[str, _Entry] = {
    "ackley_4": _Entry(lambda: Ackley(4), "continuous", "Ackley, 4-D, [-32.768, 32.768]^4"),
    "bohachevsky": _Entry(Bohachevsky, "continuous", "Bohachevsky 1, 2-D, [-100, 100]^2"),
    "branin": _Entry(Branin, "continuous", "Branin, 2-D, [-5, 10] x [0, 15]"),
    "hartmann6": _Entry(Hartmann6, "continuous", "Hartmann, 6-D, [0, 1]^6"),
    "michalewicz_2": _Entry(
        lambda: Michalewicz(2), "continuous", "Michalewicz (m = 10), 2-D, [0, pi]^2"
    ),
    "rosenbrock_4": _Entry(
        lambda: Rosenbrock(4), "continuous", "Rosenbrock, 4-D, [-2.048, 2.048]^4"
    ),
    "hartmann3": _Entry(Hartmann3, "continuous", "Hartmann, 3-D, [0, 1]^3", in_paper=False),
    "shekel": _Entry(Shekel, "continuous", "Shekel (m = 10), 4-D, [0, 10]^4", in_paper=False),
    "levy_6": _Entry(lambda: Levy(6), "continuous", "Levy, 6-D, [-10, 10]^6", in_paper=False),
    "rastrigin_4": _Entry(
        lambda: Rastrigin(4), "continuous", "Rastrigin, 4-D, [-5.12, 5.12]^4", in_paper=False
    ),
    "schwefel_4": _Entry(
        lambda: Schwefel(4), "continuous", "Schwefel, 4-D, [-500, 500]^4", in_paper=False
    ),
    "styblinski_tang_5": _Entry(
        lambda: StyblinskiTang(5), "continuous", "Styblinski-Tang, 5-D, [-5, 5]^5", in_paper=False
    ),
    "ising": _Entry(
        Ising, "binary", "Ising sparsification, 24 binary; params instance (case seed), lam"
    ),
    "contamination": _Entry(
        Contamination,
        "binary",
        "contamination control, 25 binary; params instance (case seed), lam",
    ),
    "automl": _Entry(
        AutoML, "mixed", "AutoML (Table 1), 5 hyperparameters; param dataset", in_paper=False
    ),
    **{
        f"automl_{name}": _Entry(
            lambda name=name, **kw: AutoML(name, **kw),
            "mixed",
            f"AutoML (Table 1) on scikit-learn's {name} data",
            in_paper=name != "iris",
        )
        for name in ("breast_cancer", "digits", "wine", "iris")
    },
    **{
        f"model_selection_{name}": _Entry(
            lambda name=name, **kw: ModelSelection(name, **kw),
            "mixed",
            f"model selection, 6 classifier families, 23 conditional dimensions; 5-fold CV "
            f"error on {name}",
            in_paper=False,
        )
        for name in MODEL_SELECTION_DATASETS
    },
}


def available_problems() -> list[str]:
    """Names accepted by :func:`get_problem`, besides the bbob names.

    Returns
    -------
    list of str
        In registry order. COCO's bbob problems
        (``bbob_f{function:02d}_d{dim}_i{instance}``) are accepted too but,
        being one per function, dimension and instance, not listed.
    """
    return list(_REGISTRY)


def problem_groups() -> dict[str, list[str]]:
    """The paper's problems by family: ``{"continuous": [...], "binary": [...], "mixed": [...]}``.

    The generic ``automl`` entry and the iris data set are left out: they are
    not among Kim & Choi's experiments.

    Returns
    -------
    dict of str to list of str
        Family -> problem names in registry order; the keys are always
        ``"continuous"``, ``"binary"`` and ``"mixed"``, in that order.
    """
    groups: dict[str, list[str]] = {"continuous": [], "binary": [], "mixed": []}
    for name, entry in _REGISTRY.items():
        if entry.in_paper:
            groups[entry.family].append(name)
    return groups


def problem_suites() -> dict[str, list[str]]:
    """Named selections of problems: what ``treebo bench --problems`` accepts besides names.

    The three groups of :func:`problem_groups` (the paper's problems by
    family); ``"continuous_all"``: every registered continuous problem,
    the paper's six functions and the six of :mod:`treebo.problems.multimodal`
    (Hartmann 3-D, Shekel 10, Levy, Rastrigin, Schwefel, Styblinski-Tang);
    ``"model_selection"``: the conditional model selection of
    :mod:`treebo.problems.model_selection` on breast_cancer, wine and digits.

    Returns
    -------
    dict of str to list of str
        Selection -> problem names in registry order; the keys are
        ``"continuous"``, ``"binary"``, ``"mixed"``, ``"continuous_all"`` and
        ``"model_selection"``, in that order.
    """
    suites = problem_groups()
    suites["continuous_all"] = [
        name for name, entry in _REGISTRY.items() if entry.family == "continuous"
    ]
    suites["model_selection"] = [f"model_selection_{name}" for name in MODEL_SELECTION_DATASETS]
    return suites


def select_problems(
    names: list[str] | tuple[str, ...],
    *,
    functions: list[int] | None = None,
    dims: list[int] | None = None,
    instances: list[int] | None = None,
) -> list[str]:
    """Problem names from names and suite words (``"continuous"``, ``"bbob"``, ...).

    Parameters
    ----------
    names : sequence of str
        Registered problem names, bbob names (``bbob_f01_d10_i1``), keys of
        :func:`problem_suites`, or ``"bbob"``: the bbob problems of
        ``functions``, ``dims`` and ``instances``
        (:func:`~treebo.problems.bbob.bbob_problem_names`).
    functions, dims, instances : list of int, optional
        The selection ``"bbob"`` stands for; each by default the benchmark
        protocol's (functions 1-24, dimensions 2, 5, 10, instances 1-3).
        Only allowed with ``"bbob"`` among ``names``.

    Returns
    -------
    list of str
        The problems, suites expanded in registry order, each name once, in
        the order first given.

    Raises
    ------
    ValueError
        For a name that is neither a problem nor a suite (the message lists
        both), an invalid bbob name or selection, or a bbob selection without
        ``"bbob"`` among ``names``.
    """
    suites = problem_suites()
    selection = {"functions": functions, "dims": dims, "instances": instances}
    given = [key for key, value in selection.items() if value is not None]
    if given and "bbob" not in names:
        raise ValueError(
            f"a bbob selection ({', '.join(given)}) needs the word 'bbob' among "
            f"the problems, got {list(names)}"
        )
    out: list[str] = []
    for name in names:
        if name in suites:
            out.extend(suites[name])
        elif name == "bbob":
            out.extend(bbob_problem_names(functions, dims, instances))
        elif name in _REGISTRY:
            out.append(name)
        elif is_bbob_name(name):
            parse_bbob_name(name)  # raises with the canonical form
            out.append(name)
        else:
            raise ValueError(
                f"unknown problem {name!r}; choose from {available_problems()}, "
                f"the groups {list(suites)}, 'bbob' or a bbob name such as "
                "bbob_f01_d10_i1"
            )
    return list(dict.fromkeys(out))


def _check_name(name: str) -> _Entry:
    if is_bbob_name(name):
        function, dim, instance = parse_bbob_name(name)
        return _Entry(
            lambda: BBOB(function, dim, instance), "continuous", bbob_summary(name), in_paper=False
        )
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(
            f"unknown problem {name!r}; choose one of {available_problems()} or a "
            "bbob name such as bbob_f01_d10_i1"
        )
    return _REGISTRY[name]


def problem_family(name: str) -> str:
    """``"continuous"``, ``"binary"`` or ``"mixed"`` for a registered name.

    Parameters
    ----------
    name : str
        A name from :func:`available_problems`.

    Returns
    -------
    str
        The family.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    """
    return _check_name(name).family


def problem_summary(name: str) -> str:
    """A one-line description of a registered problem.

    Parameters
    ----------
    name : str
        A name from :func:`available_problems`.

    Returns
    -------
    str
        Function or task, dimension and domain or parameters, e.g.
        ``"Branin, 2-D, [-5, 10] x [0, 15]"``.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones).
    """
    return _check_name(name).summary


def get_problem(name: str, **params: Any) -> Problem:
    """Build a benchmark problem by name (see :func:`available_problems`).

    Parameters
    ----------
    name : str
        A registered name, e.g. ``"branin"``, ``"ising"``, ``"automl_digits"``,
        or a bbob name, e.g. ``"bbob_f01_d10_i1"`` (needs ``cocoex``).
    **params
        Constructor parameters of parametrized problems: ``instance`` and
        ``lam`` for ``ising`` and ``contamination``; ``dataset``, ``cv``,
        ``data_path`` ... for ``automl``; ``cv``, ``split_random_state`` and
        ``random_state`` for ``model_selection_*``.

    Returns
    -------
    Problem
        A new instance.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the known ones) or parameters
        the problem does not take (the message lists the ones it does).
    """
    entry = _check_name(name)
    if params:
        target = entry.factory
        accepted = [
            p for p in inspect.signature(target).parameters if p not in ("self", "kw", "name")
        ]
        if name.startswith("automl_"):
            accepted = [p for p in inspect.signature(AutoML).parameters if p != "dataset"]
        elif name.startswith("model_selection_"):
            accepted = [p for p in inspect.signature(ModelSelection).parameters if p != "dataset"]
        unknown = sorted(set(params) - set(accepted))
        if unknown:
            raise ValueError(
                f"problem {name!r} does not take parameter(s) {unknown}; "
                f"it takes {accepted or 'none'}"
            )
    return entry.factory(**params)

"""Every setting of :class:`~treebo.Optimizer`, declared once.

A :class:`Setting` is one keyword argument of the optimizer: its name and
default, the values it allows (an :class:`Allowed`, which checks a value and
reads one from a word of the command line), one line of documentation, the
part of the optimizer it configures, how a study stores it, and whether a
benchmark run may override it. :data:`SETTINGS` holds them all, in the order
of ``Optimizer``'s signature, and everything that handles settings walks it:

* :func:`check_settings` checks the optimizer's keywords;
* :func:`settings_to_store` writes the settings a study stores, and
  :func:`settings_from_store` reads them back as the keywords that reproduce
  the study (``treebo ask`` and ``treebo show``, :func:`treebo.results.io.read_result`
  and the inspection functions read a study through it);
* the benchmark presets (:func:`treebo.bench.minimize_settings`) accept an
  override of each setting that is not ``fixed_in_benchmarks``;
* ``treebo minimize`` and ``treebo ask`` offer an option for each
  (:func:`treebo.cli.usage.add_setting_arguments`).

The proposal pipeline's parts check their own parameters too (they are
built without an optimizer as well, by the Optuna sampler); a setting's
:class:`Allowed` uses the same checks, so the messages are the same.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .acquisition import check_acquisition
from .metrics import check_constraints, check_objectives
from .proposal.outcomes import MULTI_OBJECTIVE
from .setting_values import (
    ACQ_OPTIMIZER_ALLOWED,
    ACQUISITION_ALLOWED,
    AUTO_INTEGER_ALLOWED,
    AUTO_NUMBER_ALLOWED,
    FAILURE_ALLOWED,
    INITIAL_DESIGN_ALLOWED,
    LOCAL_STEPS_ALLOWED,
    RESUME_PENDING_ALLOWED,
    TABLE_ALLOWED,
    Y_TRANSFORM_ALLOWED,
    YES_NO_ALLOWED,
    Allowed,
    check_seed,
    check_storage,
    check_surrogate,
    check_surrogate_name,
    choice,
    integer,
    number,
    read_objective,
)
from .storage import stable_params
from .surrogates import Surrogate, make_surrogate
from .untrusted import BoundExceededError, excerpt, literal, shorten_reprs

__all__ = [
    "Allowed",
    "Setting",
    "SETTINGS",
    "DIRECTIONS",
    "OPTIMIZER",
    "PIPELINE",
    "SURROGATE",
    "RANDOM_STREAMS",
    "STORAGE",
    "setting",
    "check_settings",
    "part_settings",
    "settings_to_store",
    "settings_from_store",
]

#: What a study does with the objective's values.
DIRECTIONS = ("minimize", "maximize")

#: The parts a setting configures (:attr:`Setting.part`).
OPTIMIZER = "optimizer"
PIPELINE = "proposal pipeline"
SURROGATE = "surrogate"
RANDOM_STREAMS = "random streams"
STORAGE = "storage"


@dataclass(frozen=True)
class Setting:
    """One keyword argument of :class:`~treebo.Optimizer`.

    Parameters
    ----------
    name : str
        The keyword.
    default : object
        Its default in ``Optimizer``'s signature (a test checks they agree).
    allowed : Allowed
        The values it takes.
    part : str
        What it configures: :data:`OPTIMIZER`, :data:`PIPELINE` (passed to
        :meth:`ProposalPipeline.from_settings
        <treebo.proposal.ProposalPipeline.from_settings>`), :data:`SURROGATE`,
        :data:`RANDOM_STREAMS` or :data:`STORAGE`.
    doc : str
        One line for people (the command line's help).
    stored : {"settings", "seed", ""}, default "settings"
        How a study stores it: in its settings table, compared when the
        study is resumed (``"settings"``); as the study's seed
        (``"seed"``, by :class:`~treebo.random_streams.RandomStreams`); or
        not at all (``""``: how this process opens the study, not part of it).
    fixed_in_benchmarks : bool, default False
        What makes the runs of one seed comparable across surrogates: a
        benchmark run's spec or its protocol sets it (the surrogate, the
        seed, ...), and its ``overrides`` may not.
    option : str, default ""
        The command-line option, when it is not ``--`` and the name with
        dashes (``random_state`` is ``--seed``).
    switch : object, optional
        For an option without a value (``--maximize``): the value it gives.
    omit_default : bool, default False
        Stored only when it is not the default, so that studies stored
        before the setting existed still resume.
    repeat : bool, default False
        The option may be given several times, each time one item
        (:attr:`Allowed.read` of each word); the setting is the list of
        items, or one table when the items are tables.
    """

    name: str
    default: Any
    allowed: Allowed
    part: str
    doc: str
    stored: str = "settings"
    fixed_in_benchmarks: bool = False
    option: str = ""
    switch: Any = None
    omit_default: bool = False
    repeat: bool = False

    @property
    def flag(self) -> str:
        """The command-line option: ``option``, or ``--`` and the name with dashes."""
        return self.option or "--" + self.name.replace("_", "-")


#: Every setting of :class:`~treebo.Optimizer`, in the order of its signature.
SETTINGS: tuple[Setting, ...] = (
    Setting(
        "surrogate",
        "bwo",
        Allowed("a registered surrogate name", check_surrogate, str, "NAME"),
        SURROGATE,
        "the surrogate model: a name from `treebo list`",
        fixed_in_benchmarks=True,  # the run's own surrogate (RunSpec.surrogate)
    ),
    Setting("acquisition", "ei", ACQUISITION_ALLOWED, PIPELINE, "the acquisition function"),
    Setting("n_initial_points", 5, integer(0), OPTIMIZER, "points of the initial design"),
    Setting(
        "initial_design",
        "sobol",
        INITIAL_DESIGN_ALLOWED,
        OPTIMIZER,
        "how the first points are drawn",
    ),
    Setting("n_candidates", 50_000, integer(1), PIPELINE, "Sobol candidates per iteration"),
    Setting("local_search", True, YES_NO_ALLOWED, PIPELINE, "add neighbours of the best points"),
    Setting(
        "n_local_candidates", 5_000, integer(0), PIPELINE, "Gaussian neighbours of the best points"
    ),
    Setting(
        "n_jump_candidates",
        2_000,
        integer(0),
        PIPELINE,
        "one-dimension jumps from the best points",
    ),
    Setting("n_local_centers", 5, integer(1), PIPELINE, "best points the neighbours are around"),
    Setting("local_center_spacing", 0.1, number(), PIPELINE, "least distance between those points"),
    Setting(
        "distance_variance",
        "auto",
        AUTO_NUMBER_ALLOWED,
        PIPELINE,
        "weight of the variance far from data",
    ),
    Setting(
        "explore_every",
        "auto",
        AUTO_INTEGER_ALLOWED,
        PIPELINE,
        "every Nth step explores (0: never)",
    ),
    Setting(
        "explore_length", 0.1, number(strict=True), PIPELINE, "length scale of an exploration step"
    ),
    Setting(
        "jump_every", "auto", AUTO_INTEGER_ALLOWED, PIPELINE, "every Nth step jumps (0: never)"
    ),
    Setting("jump_distance", 0.25, number(), PIPELINE, "least move of a jump step (unit cube)"),
    Setting(
        "local_steps", "auto", LOCAL_STEPS_ALLOWED, PIPELINE, "other steps are local steps (a GP)"
    ),
    Setting(
        "n_box_candidates", 1024, integer(1), PIPELINE, "Sobol candidates of a local step's box"
    ),
    Setting("max_halvings", 3, integer(0), PIPELINE, "halvings of that box before it gives way"),
    Setting(
        "acq_optimizer", "auto", ACQ_OPTIMIZER_ALLOWED, PIPELINE, "how the acquisition is maximized"
    ),
    Setting("surrogate_params", None, TABLE_ALLOWED, SURROGATE, "parameters of the surrogate"),
    Setting("acquisition_params", None, TABLE_ALLOWED, PIPELINE, "parameters of the acquisition"),
    Setting(
        "failure_value", "worst", FAILURE_ALLOWED, OPTIMIZER, "what the model sees at failed points"
    ),
    Setting(
        "y_transform", "auto", Y_TRANSFORM_ALLOWED, OPTIMIZER, "how values become model targets"
    ),
    Setting(
        "random_state",
        None,
        Allowed("an integer >= 0", check_seed, int, "N"),
        RANDOM_STREAMS,
        "random seed",
        stored="seed",
        fixed_in_benchmarks=True,  # the run's seed
        option="--seed",
    ),
    Setting(
        "storage",
        None,
        Allowed("a path", check_storage, str, "FILE"),
        STORAGE,
        "SQLite file that records the study; one that holds it resumes it",
        stored="",
        fixed_in_benchmarks=True,  # where a run is recorded, not how it runs
    ),
    Setting(
        "resume_pending",
        "retry",
        RESUME_PENDING_ALLOWED,
        OPTIMIZER,
        "what a resumed study does with trials asked and never told",
        stored="",
        # A benchmark run resumed from its storage must replay the uninterrupted one.
        fixed_in_benchmarks=True,
    ),
    Setting(
        "direction",
        "minimize",
        choice(DIRECTIONS),
        OPTIMIZER,
        "look for the largest value instead of the smallest",
        fixed_in_benchmarks=True,  # regret is measured on problems that are minimized
        option="--maximize",
        switch="maximize",
        omit_default=True,
    ),
    Setting(
        "objectives",
        None,
        Allowed(
            "metric names to 'minimize' or 'maximize' (NAME:min or NAME:max)",
            check_objectives,
            read_objective,
            "NAME:{min,max}",
        ),
        OPTIMIZER,
        "a metric of the returned dict to optimize (repeat for several)",
        fixed_in_benchmarks=True,  # a problem's own
        option="--objective",
        omit_default=True,
        repeat=True,
    ),
    Setting(
        "constraints",
        None,
        Allowed(
            "limits 'NAME <= BOUND' or 'NAME >= BOUND' on returned metrics",
            check_constraints,
            str,
            "'NAME <= BOUND'",
        ),
        OPTIMIZER,
        "a limit on a metric of the returned dict (repeat for several)",
        fixed_in_benchmarks=True,  # a problem's own
        option="--constraint",
        omit_default=True,
        repeat=True,
    ),
    Setting(
        "constraint_surrogate",
        "gp",
        Allowed("a registered surrogate name", check_surrogate_name, str, "NAME"),
        OPTIMIZER,
        "the model of each constraint: a name from `treebo list`",
        omit_default=True,
    ),
    Setting(
        "multi_objective",
        "parego",
        choice(MULTI_OBJECTIVE),
        PIPELINE,
        "how several objectives score a candidate",
        omit_default=True,
    ),
)

_BY_NAME = {s.name: s for s in SETTINGS}


def setting(name: str) -> Setting:
    """The declaration of setting ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    Setting

    Raises
    ------
    KeyError
        If no setting has that name.
    """
    return _BY_NAME[name]


def check_settings(**given: Any) -> dict[str, Any]:
    """Every setting, the given ones checked and the others at their defaults.

    Parameters
    ----------
    **given
        Values by setting name.

    Returns
    -------
    dict
        By name, in the order of :data:`SETTINGS`: each value as the
        optimizer keeps it (:attr:`Allowed.check`).

    Raises
    ------
    TypeError
        If a name is not a setting.
    ValueError
        Naming the first setting whose value is not allowed, and what is.
        Two settings checked together (an acquisition and its parameters,
        a surrogate's name and its parameters) are checked by the part they
        go to, when it is built.
    """
    unknown = sorted(set(given) - set(_BY_NAME))
    if unknown:
        raise TypeError(f"unknown settings {unknown}; the settings are {list(_BY_NAME)}")
    return {
        s.name: s.allowed.check(given[s.name], s.name) if s.name in given else s.default
        for s in SETTINGS
    }


def part_settings(settings: Mapping[str, Any], part: str) -> dict[str, Any]:
    """The settings among ``settings`` that configure ``part``.

    Parameters
    ----------
    settings : mapping
        Values by setting name (:func:`check_settings`).
    part : str
        :data:`OPTIMIZER`, :data:`PIPELINE`, :data:`SURROGATE`,
        :data:`RANDOM_STREAMS` or :data:`STORAGE`.

    Returns
    -------
    dict
    """
    return {s.name: settings[s.name] for s in SETTINGS if s.part == part and s.name in settings}


def settings_to_store(settings: Mapping[str, Any], surrogate: Surrogate) -> dict[str, Any]:
    """The settings table a study stores: everything but the space and the seed that
    shapes its proposals.

    A study is resumed only with the same table (:func:`~treebo.storage.open_study`).

    Parameters
    ----------
    settings : mapping
        Every setting (:func:`check_settings`).
    surrogate : Surrogate
        The unfitted surrogate the settings made.

    Returns
    -------
    dict
        JSON-safe, by name: each setting stored as ``"settings"``, except
        one marked ``omit_default`` at its default. The surrogate is its
        name (its class name for an instance), ``surrogate_params`` every
        parameter of the surrogate (:func:`~treebo.storage.stable_params`,
        so that a change of a surrogate's defaults is a change of the
        study), ``acquisition_params`` every parameter of the acquisition.
    """
    out: dict[str, Any] = {}
    for s in SETTINGS:
        if s.stored != "settings":
            continue
        value = settings[s.name]
        if s.omit_default and value == s.default:
            continue
        if s.name == "surrogate" and not isinstance(value, str):
            value = type(value).__name__
        elif s.name == "surrogate_params":
            value = stable_params(surrogate.get_params(deep=False))
        elif s.name == "acquisition_params":
            value = check_acquisition(settings["acquisition"], value)
        out[s.name] = value
    return out


def settings_from_store(meta: Mapping[str, Any], path: str | os.PathLike) -> dict[str, Any]:
    """The keyword arguments of :class:`~treebo.Optimizer` that reproduce a stored study.

    Reads what :func:`settings_to_store` wrote, in this version or an earlier
    one, and the study's seed.

    Parameters
    ----------
    meta : mapping
        The study's table (``read_study(path)["meta"]``).
    path : str or os.PathLike
        The storage, for messages.

    Returns
    -------
    dict
        By name, each setting a study stores (not ``storage`` or
        ``resume_pending``): its stored value, or its default where the study
        stores none; ``random_state`` is the study's seed (None if it has
        none); ``surrogate_params`` holds the surrogate's parameters that
        differ from its defaults (None if none does), stored reprs of
        literals (tuples...) read back as the values, other reprs left as
        text; ``None`` when the surrogate cannot be made here, its stored
        parameters as they are (reprs read back).

    Raises
    ------
    ValueError
        Naming the file, if the settings are not a table or a stored value
        is not allowed (a :class:`~treebo.untrusted.BoundExceededError` if
        it is over the bounds of :mod:`treebo.untrusted`).
    """
    stored = meta.get("settings", {})
    if not isinstance(stored, dict):
        raise ValueError(
            f"storage {str(path)!r} is damaged: its settings are {excerpt(stored)}, not a table"
        )
    out: dict[str, Any] = {}
    for s in SETTINGS:
        if s.stored == "settings":
            value = stored.get(s.name, s.default)
        elif s.stored == "seed":
            value = meta.get("seed")
        else:
            continue
        if s.name == "surrogate_params" and isinstance(value, dict):
            value = _changed_params(stored.get("surrogate"), value, path)
        try:
            out[s.name] = s.allowed.check(value, s.name)
        except ValueError as error:
            raise ValueError(
                f"storage {str(path)!r} is damaged: {shorten_reprs(str(error), [value])}"
            ) from None
    return out


def _changed_params(name: Any, params: dict, path: str | os.PathLike) -> dict | None:
    """The stored surrogate parameters that differ from the surrogate's defaults, read back."""
    defaults = _default_params(name) if isinstance(name, str) else None
    changed = {
        k: _from_repr(v, f"surrogate_params[{excerpt(k)}]", path)
        for k, v in params.items()
        if defaults is None or defaults.get(k) != v
    }
    return changed or None


@functools.lru_cache(maxsize=16)
def _default_params(name: str) -> dict | None:
    """A registered surrogate's default parameters as stored; None if it cannot be made here
    (an instance's class name, a missing extra: building the optimizer says which)."""
    try:
        return stable_params(make_surrogate(name).get_params(deep=False))
    except (ValueError, ImportError):
        return None


def _from_repr(value: Any, name: str, path: str | os.PathLike) -> Any:
    """A stored value: a repr of a literal is read back as that value, other text stays text."""
    if not isinstance(value, str):
        return value
    try:
        return literal(value, what=f"stored setting {name} {excerpt(value)}")
    except BoundExceededError as error:
        raise BoundExceededError(f"storage {str(path)!r} is damaged: {error}") from None
    except ValueError:
        return value

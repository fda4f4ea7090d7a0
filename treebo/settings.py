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
import numbers
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._checks import check_auto_or, check_choice, check_int, check_real
from .acquisition import ACQUISITIONS, check_acquisition
from .acquisition.maximizer import ACQ_OPTIMIZERS
from .initial_design import INITIAL_DESIGNS
from .metrics import check_constraints, check_objectives
from .proposal.outcomes import MULTI_OBJECTIVE
from .resume import RESUME_PENDING
from .storage import stable_params
from .surrogates import Surrogate, make_surrogate
from .targets import Y_TRANSFORMS, check_failure_value
from .untrusted import BoundExceededError, excerpt, literal, load_json, shorten_reprs

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
class Allowed:
    """The values a setting allows.

    Parameters
    ----------
    text : str
        What is allowed, for people: ``"an integer >= 1"``.
    check : callable
        ``check(value, name)`` returns the value as the optimizer keeps it
        (an integer as an ``int``, a real as a ``float``) and raises a
        ``ValueError`` naming ``name`` for any other value.
    read : callable or None
        ``read(word)`` gives the value a word of the command line stands
        for (before ``check``), raising ``ValueError`` if it stands for none;
        ``None`` for a yes/no setting, which is an option without a value.
    metavar : str, default "VALUE"
        The word in the command line's help (``N``, ``{auto,log,standardize}``).
    """

    text: str
    check: Callable[[Any, str], Any]
    read: Callable[[str], Any] | None
    metavar: str = "VALUE"


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


# -- the values settings allow ------------------------------------------------------------
def _words(mapping: Mapping[str, Any], what: str) -> Callable[[str], Any]:
    def read(word: str) -> Any:
        if word not in mapping:
            raise ValueError(f"{word!r} is not {what}")
        return mapping[word]

    return read


def _auto_or(read: Callable[[str], Any]) -> Callable[[str], Any]:
    def read_auto(word: str) -> Any:
        return "auto" if word == "auto" else read(word)

    return read_auto


def _integer(low: int) -> Allowed:
    return Allowed(f"an integer >= {low}", lambda v, n: check_int(v, n, low), int, "N")


def _number(strict: bool = False) -> Allowed:
    text = "a finite number > 0" if strict else "a finite number >= 0"
    return Allowed(text, lambda v, n: check_real(v, n, strict=strict), float, "X")


def _choice(values: tuple[str, ...]) -> Allowed:
    return Allowed(
        f"one of {values}",
        lambda v, n: check_choice(v, n, values),
        _words(dict(zip(values, values)), f"one of {', '.join(values)}"),
        "{" + ",".join(values) + "}",
    )


def _auto_or_integer() -> Allowed:
    def check(value: Any, name: str) -> Any:
        return check_auto_or(value, name, lambda v, n: check_int(v, n, 0), "an integer >= 0")

    return Allowed("'auto' or an integer >= 0", check, _auto_or(int), "{auto,N}")


def _auto_or_number() -> Allowed:
    def check(value: Any, name: str) -> Any:
        return check_auto_or(value, name, check_real, "a finite number >= 0")

    return Allowed("'auto' or a finite number >= 0", check, _auto_or(float), "{auto,X}")


def _check_local_steps(value: Any, name: str) -> Any:
    if not (value == "auto" or isinstance(value, bool)):
        raise ValueError(f"{name} must be 'auto', True or False, got {value!r}")
    return value


def _check_table(value: Any, name: str) -> Any:
    if value is not None and not isinstance(value, Mapping):
        raise ValueError(f"{name} must be a dict or None, got {value!r}")
    return value


def _read_table(word: str) -> dict:
    value = load_json(word, what="the value")  # bounded; not JSON is a ValueError
    if not isinstance(value, dict):
        raise ValueError(f"{excerpt(word)} is not a JSON object")
    return value


def _check_surrogate(value: Any, name: str) -> Any:
    if not isinstance(value, (str, Surrogate)):
        raise ValueError(f"{name} must be a registered name or a Surrogate instance, got {value!r}")
    return value


def _check_surrogate_name(value: Any, name: str) -> Any:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a registered surrogate name, got {value!r}")
    return value


def _check_seed(value: Any, name: str) -> Any:
    # What RandomStreams accepts; checked here without drawing from a RandomState.
    if value is None or isinstance(
        value,
        (
            np.random.Generator,
            np.random.RandomState,
            np.random.SeedSequence,
            np.random.BitGenerator,
        ),
    ):
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= 0:
        return int(value)
    raise ValueError(
        f"{name} must be None, an int >= 0, a numpy.random.Generator or a "
        f"numpy.random.RandomState, got {value!r}"
    )


def _check_acquisition(value: Any, name: str) -> Any:
    check_acquisition(value, None)  # its parameters are checked with them
    return value


def _check_storage(value: Any, name: str) -> Any:
    # Which paths can hold a study is the storage's to say (SQLiteStorage names it).
    return value


def _read_objective(word: str) -> dict[str, str]:
    name, _, direction = word.rpartition(":")
    if not name or direction not in ("min", "max", "minimize", "maximize"):
        raise ValueError(f"{excerpt(word)} is not NAME:min or NAME:max")
    return {name: direction}


def _read_failure_value(word: str) -> Any:
    return "worst" if word == "worst" else float(word)


# -- the declaration ------------------------------------------------------------------------
_ACQUISITION = Allowed(
    f"one of {tuple(ACQUISITIONS)}",
    _check_acquisition,
    _words({a: a for a in ACQUISITIONS}, f"one of {', '.join(ACQUISITIONS)}"),
    "{" + ",".join(ACQUISITIONS) + "}",
)
_LOCAL_STEPS = Allowed(
    "'auto', True or False",
    _check_local_steps,
    _words({"auto": "auto", "true": True, "false": False}, "one of auto, true, false"),
    "{auto,true,false}",
)
_FAILURE = Allowed(
    "'worst' or a finite number",
    lambda v, n: check_failure_value(v),
    _read_failure_value,
    "{worst,X}",
)
_YES_NO = Allowed("True or False", lambda v, n: bool(v), None)
_AUTO_INTEGER = _auto_or_integer()
_INITIAL_DESIGN, _ACQ_OPTIMIZER = _choice(INITIAL_DESIGNS), _choice(ACQ_OPTIMIZERS)
_Y_TRANSFORM, _RESUME_PENDING = _choice(Y_TRANSFORMS), _choice(RESUME_PENDING)
_AUTO_NUMBER = _auto_or_number()
_TABLE = Allowed(
    "a table (a dict; a JSON object on the command line)", _check_table, _read_table, "JSON"
)

#: Every setting of :class:`~treebo.Optimizer`, in the order of its signature.
SETTINGS: tuple[Setting, ...] = (
    Setting(
        "surrogate",
        "bwo",
        Allowed("a registered surrogate name", _check_surrogate, str, "NAME"),
        SURROGATE,
        "the surrogate model: a name from `treebo list`",
        fixed_in_benchmarks=True,  # the run's own surrogate (RunSpec.surrogate)
    ),
    Setting("acquisition", "ei", _ACQUISITION, PIPELINE, "the acquisition function"),
    Setting("n_initial_points", 5, _integer(0), OPTIMIZER, "points of the initial design"),
    Setting(
        "initial_design", "sobol", _INITIAL_DESIGN, OPTIMIZER, "how the first points are drawn"
    ),
    Setting("n_candidates", 50_000, _integer(1), PIPELINE, "Sobol candidates per iteration"),
    Setting("local_search", True, _YES_NO, PIPELINE, "add neighbours of the best points"),
    Setting(
        "n_local_candidates", 5_000, _integer(0), PIPELINE, "Gaussian neighbours of the best points"
    ),
    Setting(
        "n_jump_candidates",
        2_000,
        _integer(0),
        PIPELINE,
        "one-dimension jumps from the best points",
    ),
    Setting("n_local_centers", 5, _integer(1), PIPELINE, "best points the neighbours are around"),
    Setting(
        "local_center_spacing", 0.1, _number(), PIPELINE, "least distance between those points"
    ),
    Setting(
        "distance_variance", "auto", _AUTO_NUMBER, PIPELINE, "weight of the variance far from data"
    ),
    Setting("explore_every", "auto", _AUTO_INTEGER, PIPELINE, "every Nth step explores (0: never)"),
    Setting(
        "explore_length", 0.1, _number(strict=True), PIPELINE, "length scale of an exploration step"
    ),
    Setting("jump_every", "auto", _AUTO_INTEGER, PIPELINE, "every Nth step jumps (0: never)"),
    Setting("jump_distance", 0.25, _number(), PIPELINE, "least move of a jump step (unit cube)"),
    Setting("local_steps", "auto", _LOCAL_STEPS, PIPELINE, "other steps are local steps (a GP)"),
    Setting(
        "n_box_candidates", 1024, _integer(1), PIPELINE, "Sobol candidates of a local step's box"
    ),
    Setting("max_halvings", 3, _integer(0), PIPELINE, "halvings of that box before it gives way"),
    Setting("acq_optimizer", "auto", _ACQ_OPTIMIZER, PIPELINE, "how the acquisition is maximized"),
    Setting("surrogate_params", None, _TABLE, SURROGATE, "parameters of the surrogate"),
    Setting("acquisition_params", None, _TABLE, PIPELINE, "parameters of the acquisition"),
    Setting("failure_value", "worst", _FAILURE, OPTIMIZER, "what the model sees at failed points"),
    Setting("y_transform", "auto", _Y_TRANSFORM, OPTIMIZER, "how values become model targets"),
    Setting(
        "random_state",
        None,
        Allowed("an integer >= 0", _check_seed, int, "N"),
        RANDOM_STREAMS,
        "random seed",
        stored="seed",
        fixed_in_benchmarks=True,  # the run's seed
        option="--seed",
    ),
    Setting(
        "storage",
        None,
        Allowed("a path", _check_storage, str, "FILE"),
        STORAGE,
        "SQLite file that records the study; one that holds it resumes it",
        stored="",
        fixed_in_benchmarks=True,  # where a run is recorded, not how it runs
    ),
    Setting(
        "resume_pending",
        "retry",
        _RESUME_PENDING,
        OPTIMIZER,
        "what a resumed study does with trials asked and never told",
        stored="",
        # A benchmark run resumed from its storage must replay the uninterrupted one.
        fixed_in_benchmarks=True,
    ),
    Setting(
        "direction",
        "minimize",
        _choice(DIRECTIONS),
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
            _read_objective,
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
        Allowed("a registered surrogate name", _check_surrogate_name, str, "NAME"),
        OPTIMIZER,
        "the model of each constraint: a name from `treebo list`",
        omit_default=True,
    ),
    Setting(
        "multi_objective",
        "parego",
        _choice(MULTI_OBJECTIVE),
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

"""The settings, declared once: every setting the optimizer takes is declared, accepted by
the benchmark presets, reachable from the command line and read back from a stored study."""

import inspect
import json
import math
import sqlite3

import pytest

from treebo import Optimizer, Real
from treebo.bench import RunSpec, minimize_settings
from treebo.cli import main
from treebo.problems import get_problem
from treebo.proposal import ProposalPipeline
from treebo.results.io import read_result
from treebo.settings import (
    PIPELINE,
    SETTINGS,
    check_settings,
    part_settings,
    setting,
    settings_from_store,
    settings_to_store,
)
from treebo.shared_study import open_shared
from treebo.storage import StorageMismatchError, read_study
from treebo.surrogates import make_surrogate

SPACE = [Real(-1.0, 1.0), Real(0.0, 2.0)]

# A value other than the default for every setting, and the words of the command line
# that give it. A new setting fails test_every_setting_has_a_non_default_example until
# it is added here, and then every test below walks it.
NON_DEFAULT = {
    "surrogate": ("rf", ["--surrogate", "rf"]),
    "acquisition": ("lcb", ["--acquisition", "lcb"]),
    "n_initial_points": (3, ["--n-initial-points", "3"]),
    "initial_design": ("random", ["--initial-design", "random"]),
    "n_candidates": (300, ["--n-candidates", "300"]),
    "local_search": (False, ["--no-local-search"]),
    "n_local_candidates": (100, ["--n-local-candidates", "100"]),
    "n_jump_candidates": (50, ["--n-jump-candidates", "50"]),
    "n_local_centers": (2, ["--n-local-centers", "2"]),
    "local_center_spacing": (0.2, ["--local-center-spacing", "0.2"]),
    "distance_variance": (0.5, ["--distance-variance", "0.5"]),
    "explore_every": (3, ["--explore-every", "3"]),
    "explore_length": (0.3, ["--explore-length", "0.3"]),
    "jump_every": (2, ["--jump-every", "2"]),
    "jump_distance": (0.4, ["--jump-distance", "0.4"]),
    "local_steps": (False, ["--local-steps", "false"]),
    "n_box_candidates": (64, ["--n-box-candidates", "64"]),
    "max_halvings": (1, ["--max-halvings", "1"]),
    "acq_optimizer": ("sampling", ["--acq-optimizer", "sampling"]),
    "surrogate_params": ({"n_estimators": 7}, ["--surrogate-params", '{"n_estimators": 7}']),
    "acquisition_params": ({"kappa": 2.5}, ["--acquisition-params", '{"kappa": 2.5}']),
    "failure_value": (3.5, ["--failure-value", "3.5"]),
    "y_transform": ("standardize", ["--y-transform", "standardize"]),
    "random_state": (123, ["--seed", "123"]),
    "storage": ("study.db", ["--storage", "study.db"]),
    "resume_pending": ("fail", ["--resume-pending", "fail"]),
    "direction": ("maximize", ["--maximize"]),
    "objectives": (
        {"loss": "minimize", "speed": "maximize"},
        ["--objective", "loss:min", "--objective", "speed:max"],
    ),
    "constraints": (
        ["size <= 5.0", "speed >= 1.5"],
        ["--constraint", "size<=5", "--constraint", "speed >= 1.5"],
    ),
    "constraint_surrogate": ("rf", ["--constraint-surrogate", "rf"]),
    "multi_objective": ("ehvi", ["--multi-objective", "ehvi"]),
}
# Settings that another setting's non-default value rules out: a study with objectives
# takes their directions there, and constraints weigh the acquisition "ei" or "pi".
SEVERAL_METRICS = ("objectives", "constraints")
RULED_OUT_BY_METRICS = ("direction", "acquisition")

# The settings treebo wrote for Optimizer(SPACE, random_state=0, storage=...) before the
# settings were declared in one place: a study stored by that version still opens.
STORED_DEFAULTS = {
    "surrogate": "bwo",
    "surrogate_params": {
        "max_depth": None,
        "max_features": "sqrt",
        "min_leaf_variance": 0.0,
        "min_samples_leaf": 1,
        "min_samples_split": 2,
        "n_estimators": 100,
        "n_jobs": None,
        "oversampling": 4.0,
        "random_state": None,
    },
    "n_initial_points": 5,
    "initial_design": "sobol",
    "acquisition": "ei",
    "acquisition_params": {"xi": 0.0},
    "acq_optimizer": "auto",
    "n_candidates": 50000,
    "local_search": True,
    "n_local_candidates": 5000,
    "n_local_centers": 5,
    "n_jump_candidates": 2000,
    "local_center_spacing": 0.1,
    "distance_variance": "auto",
    "jump_distance": 0.25,
    "explore_length": 0.1,
    "n_box_candidates": 1024,
    "max_halvings": 3,
    "explore_every": "auto",
    "jump_every": "auto",
    "local_steps": "auto",
    "failure_value": "worst",
    "y_transform": "auto",
}
# ... and for a maximized GP study with tuple parameters and an integer for a real.
STORED_MAXIMIZED_GP = {
    "surrogate": "gp",
    "surrogate_params": {
        "length_scale_bounds": "(0.1, 10.0)",
        "max_fit_samples": 200,
        "n_restarts": 2,
        "noise_bounds": "(1e-08, 1.0)",
        "random_state": None,
    },
    **{k: v for k, v in STORED_DEFAULTS.items() if k not in ("surrogate", "surrogate_params")},
    "acquisition": "lcb",
    "acquisition_params": {"kappa": 1.96},
    "local_center_spacing": 1.0,
    "failure_value": 3,
    "direction": "maximize",
}
MAXIMIZED_GP = dict(
    surrogate="gp",
    acquisition="lcb",
    direction="maximize",
    surrogate_params={"length_scale_bounds": (0.1, 10.0)},
    local_center_spacing=1,
    failure_value=3,
)


def _values(tmp_path):
    values = {name: value for name, (value, _) in NON_DEFAULT.items()}
    values["storage"] = tmp_path / "study.db"
    return values


def test_every_setting_has_a_non_default_example():
    assert list(NON_DEFAULT) == [s.name for s in SETTINGS]
    for s in SETTINGS:
        assert NON_DEFAULT[s.name][0] != s.default, s.name


def test_the_optimizer_signature_is_the_declaration():
    # (i) Every keyword of Optimizer is a declared setting, with the declared default;
    # the signature stays explicit for users and IDEs, and cannot drift from it.
    parameters = dict(inspect.signature(Optimizer).parameters)
    assert list(parameters) == ["dimensions", *(s.name for s in SETTINGS)]
    for s in SETTINGS:
        assert parameters[s.name].default == s.default, s.name
        assert type(parameters[s.name].default) is type(s.default), s.name


def test_the_pipeline_settings_are_the_pipelines_parts_and_stored_as_they_keep_them():
    assert {s.name for s in SETTINGS if s.part == PIPELINE} == set(ProposalPipeline.setting_names())
    given = {n: v for n, (v, _) in NON_DEFAULT.items() if setting(n).part == PIPELINE}
    given["local_center_spacing"] = 1  # an integer for a real: stored as 1.0
    settings = check_settings(**given)
    pipeline = ProposalPipeline.from_settings(**part_settings(settings, PIPELINE))
    stored = settings_to_store(settings, make_surrogate("bwo"))
    assert {n: stored[n] for n in pipeline.get_params()} == pipeline.get_params()
    assert json.dumps(stored["local_center_spacing"]) == "1.0"


_PROBES = [0, 1, -1, 2, 0.5, 1.5, 10**6, "auto", "x", True, False, None, math.nan, math.inf]


def _outcome(call):
    try:
        return "ok", call()
    except (ValueError, TypeError) as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize(
    "name", [s.name for s in SETTINGS if s.part == PIPELINE and s.name != "acquisition_params"]
)
def test_a_pipeline_settings_check_agrees_with_its_part(name):
    # The parts check their own parameters too (the Optuna sampler builds them
    # without an optimizer): the declaration allows what they allow, kept the same
    # way, and refuses the rest with their message.
    s = setting(name)
    for probe in _PROBES:
        declared = _outcome(lambda p=probe: s.allowed.check(p, name))
        built = _outcome(
            lambda p=probe: ProposalPipeline.from_settings(**{name: p}).get_params()[name]
        )
        assert declared == built, (name, probe)


def test_check_settings_fills_the_defaults_and_names_what_is_wrong():
    assert check_settings() == {s.name: s.default for s in SETTINGS}
    assert check_settings(n_candidates=10)["n_candidates"] == 10
    with pytest.raises(TypeError, match=r"unknown settings \['n_candidate'\]"):
        check_settings(n_candidate=10)
    with pytest.raises(ValueError, match="max_halvings must be an integer >= 0, got -1"):
        check_settings(max_halvings=-1)
    with pytest.raises(ValueError, match="failure_value must be 'worst' or a finite number"):
        Optimizer(SPACE, failure_value=math.nan)
    with pytest.raises(ValueError, match="surrogate_params must be a dict or None"):
        Optimizer(SPACE, surrogate_params=[("n_estimators", 3)])


def test_several_metrics_rule_out_a_direction_and_the_lcb_acquisition():
    with pytest.raises(ValueError, match="give each objective's direction in objectives"):
        Optimizer(SPACE, objectives=["a"], direction="maximize")
    with pytest.raises(ValueError, match="constraints need the acquisition 'ei' or 'pi'"):
        Optimizer(SPACE, objectives=["a"], constraints=["b <= 1"], acquisition="lcb")
    with pytest.raises(ValueError, match="constraints need objectives="):
        Optimizer(SPACE, constraints=["b <= 1"])


@pytest.mark.parametrize("metrics", [False, True], ids=["one objective", "several metrics"])
def test_every_setting_survives_a_stored_studys_round_trip(tmp_path, metrics):
    # (iv) Made with a value other than the default of every setting, stored in
    # SQLite, read back: each stored setting comes back as given, and the settings
    # read back open the study again (any difference would be a mismatch). The
    # settings of several metrics rule some others out, so they go in a study of
    # their own.
    values = _values(tmp_path)
    for name in RULED_OUT_BY_METRICS if metrics else SEVERAL_METRICS:
        del values[name]
    if metrics:
        values["acquisition_params"] = {"xi": 0.01}  # of "ei"
    db = values["storage"]
    Optimizer(SPACE, **values).close()
    read = settings_from_store(read_study(db)["meta"], db)
    for s in SETTINGS:
        if s.stored and s.name in values:
            assert read[s.name] == s.allowed.check(values[s.name], s.name), s.name
        elif s.stored:
            assert read[s.name] == check_settings()[s.name], s.name
        else:
            assert s.name not in read
    # Not stored: how this process opens the study, not part of it.
    assert [s.name for s in SETTINGS if not s.stored] == ["storage", "resume_pending"]
    with Optimizer(SPACE, storage=db, **read) as reopened:
        assert reopened.random_state == 123
        assert reopened.direction == ("minimize" if metrics else "maximize")
    assert read_result(db).settings == read
    with open_shared(db) as shared:  # the reader of treebo ask
        assert shared.pipeline.get_params() == Optimizer(SPACE, **{**read}).pipeline.get_params()
    with pytest.raises(StorageMismatchError, match="max_halvings: stored 1, given 3"):
        Optimizer(SPACE, storage=db, **{**read, "max_halvings": 3})


@pytest.mark.parametrize(
    "given, stored",
    [({}, STORED_DEFAULTS), (MAXIMIZED_GP, STORED_MAXIMIZED_GP)],
    ids=["defaults", "maximized gp"],
)
def test_a_study_stored_by_an_earlier_version_opens(tmp_path, given, stored):
    settings = check_settings(**given)
    surrogate = make_surrogate(settings["surrogate"], **(settings["surrogate_params"] or {}))
    assert json.loads(json.dumps(settings_to_store(settings, surrogate))) == stored
    db = tmp_path / "old.db"
    Optimizer(SPACE, random_state=0, storage=db, **given).close()
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE study SET value = ? WHERE key = 'settings'", (json.dumps(stored),))
    conn.close()
    Optimizer(SPACE, storage=db, **given).close()
    read = settings_from_store(read_study(db)["meta"], db)
    expected = check_settings(**given, random_state=0)
    expected = {s.name: expected[s.name] for s in SETTINGS if s.stored}
    expected["acquisition_params"] = stored["acquisition_params"]  # stored with the defaults
    assert read == expected and read["random_state"] == 0
    if "surrogate_params" in given:  # the stored repr of a tuple comes back as the tuple
        assert read["surrogate_params"] == {"length_scale_bounds": (0.1, 10.0)}


@pytest.mark.fault
def test_a_stored_value_a_setting_does_not_allow_is_damage_naming_the_file(tmp_path):
    db = tmp_path / "s.db"
    Optimizer(SPACE, random_state=0, storage=db).close()
    conn = sqlite3.connect(db, isolation_level=None)
    (text,) = conn.execute("SELECT value FROM study WHERE key = 'settings'").fetchone()
    settings = json.loads(text)
    settings["n_box_candidates"] = "many" * 1000
    conn.execute("UPDATE study SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    conn.close()
    message = f"storage {str(db)!r} is damaged: n_box_candidates must be an integer >= 1, got 'many"
    for read in (read_result, lambda path: open_shared(path).__enter__()):
        with pytest.raises(ValueError) as caught:
            read(db)
        assert str(caught.value).startswith(message) and len(str(caught.value)) < 250


def test_the_presets_take_an_override_of_every_setting_not_fixed_in_benchmarks(tmp_path):
    # (ii) Fixed: what makes the runs of one seed comparable across surrogates.
    branin = get_problem("branin")
    values = _values(tmp_path)
    fixed = []
    for s in SETTINGS:
        spec = RunSpec("branin", "bwo", 0, 20, overrides={s.name: values[s.name]})
        if s.fixed_in_benchmarks:
            fixed.append(s.name)
            with pytest.raises(ValueError, match="not allowed"):
                minimize_settings(spec, branin)
        else:
            assert minimize_settings(spec, branin)[s.name] == values[s.name], s.name
    assert fixed == [
        "surrogate",
        "random_state",
        "storage",
        "resume_pending",
        "direction",
        "objectives",
        "constraints",
    ]
    with pytest.raises(ValueError, match="n_box_candidates must be an integer >= 1, got 0"):
        minimize_settings(
            RunSpec("branin", "bwo", 0, 20, overrides={"n_box_candidates": 0}), branin
        )


class _Called(Exception):
    """Raised by the stand-ins below with the arguments they were given."""


def _command_line(tmp_path):
    words = [w for _, argv in NON_DEFAULT.values() for w in argv]
    return [str(tmp_path / w) if w == "study.db" else w for w in words]


def test_every_setting_reaches_minimize_from_the_command_line(tmp_path, monkeypatch):
    # (iii) treebo minimize has an option for every setting, and the value given
    # on the command line is the one the optimizer gets.
    import treebo

    (tmp_path / "f.py").write_text("def f(x):\n    return x[0]\n")
    (tmp_path / "space.json").write_text(
        '{"dimensions": [{"name": "x", "type": "Real", "low": 0, "high": 1}]}'
    )

    def minimize(func, space, **kwargs):
        raise _Called(kwargs)

    monkeypatch.setattr(treebo, "minimize", minimize)
    monkeypatch.chdir(tmp_path)
    argv = ["minimize", "f.py:f", "--space", "space.json", *_command_line(tmp_path)]
    with pytest.raises(_Called) as called:
        main(argv)
    (kwargs,) = called.value.args
    values = {**_values(tmp_path), "storage": str(tmp_path / "study.db")}
    for s in SETTINGS:
        assert s.name in kwargs, s.name
        expected = s.allowed.check(values[s.name], s.name)
        assert s.allowed.check(kwargs[s.name], s.name) == expected, s.name


def test_every_setting_of_a_study_reaches_treebo_ask(tmp_path, monkeypatch):
    from treebo import shared_study

    def ask(path, space=None, *, wait, **settings):
        raise _Called(settings)

    monkeypatch.setattr(shared_study, "ask", ask)
    own = ("storage", "resume_pending")  # ask's own --storage; its pending trials are kept
    words = [w for n, (_, argv) in NON_DEFAULT.items() if n not in own for w in argv]
    with pytest.raises(_Called) as called:
        main(["ask", "--storage", str(tmp_path / "s.db"), *words])
    (given,) = called.value.args
    assert list(given) == [n for n in NON_DEFAULT if n not in own]
    for name, value in given.items():
        check = setting(name).allowed.check
        assert check(value, name) == check(NON_DEFAULT[name][0], name), name

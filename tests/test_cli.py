"""The ``treebo`` command."""

import gzip
import json
import os
import subprocess
import sys

import pytest

from treebo.cli import main

FAST = ["--n-candidates", "256"]


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in (
        "branin",
        "hartmann6",
        "ising",
        "contamination",
        "automl_digits",
        "bwo",
        "rf",
        "ert",
        "gp",
        "continuous",
    ):
        assert name in out


def test_minimize_shows_progress_and_the_result(capsys, tmp_path):
    code = main(
        [
            "minimize",
            "branin",
            "--surrogate",
            "rf",
            "--n-calls",
            "8",
            "--seed",
            "2",
            *FAST,
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    captured = capsys.readouterr()
    assert "branin/rf [" in captured.err and "8/8" in captured.err and "best=" in captured.err
    assert "best value" in captured.out and "regret" in captured.out
    (line,) = (tmp_path / "branin.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert (record["surrogate"], record["seed"], record["n_evaluated"]) == ("rf", 2, 8)
    assert f"{record['best_so_far'][-1]:.10g}" in captured.out


def test_minimize_with_problem_parameters(capsys):
    code = main(
        [
            "minimize",
            "contamination",
            "--surrogate",
            "rf",
            "--n-calls",
            "6",
            "--quiet",
            "--param",
            "instance=466",
            "--param",
            "lam=0",
            *FAST,
        ]
    )
    assert code == 0
    assert "optimum 21.14" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, message",
    [
        (["minimize", "brannin"], r"unknown problem 'brannin'.*'branin'"),
        (["minimize", "branin", "--surrogate", "xgb"], r"unknown surrogate.*'bwo'"),
        (["minimize", "ising", "--param", "lambda=1"], r"does not take.*'lam'"),
        (["minimize", "ising", "--param", "lam"], "KEY=VALUE"),
        (["bench", "--problems", "nope", "--out", "x"], r"unknown problem 'nope'.*groups"),
        (["bench", "--problems", "branin"], "--out"),
        (["bench", "--problems", "branin", "--out", "x", "--seeds", "4-2"], "seeds"),
        (["plot", "/nonexistent/dir", "--out", "x"], "does not exist"),
        (["minimize", "automl", "--param", "dataset=authorship"], "authorship"),
    ],
)
def test_bad_arguments_exit_with_2_and_say_why(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"treebo {argv[0]}: error:")
    assert pytest.importorskip("re").search(message, err)


def test_bench_plot_and_summary(tmp_path, capsys):
    out, figures = tmp_path / "results", tmp_path / "figures"
    argv = [
        "bench",
        "--problems",
        "branin",
        "--surrogates",
        "rf",
        "ert",
        "--seeds",
        "0-1",
        "--n-calls",
        "7",
        "--out",
        str(out),
        "--n-jobs",
        "1",
        *FAST,
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    # The bar counts evaluations: 2 surrogates x 2 seeds x 7 calls.
    assert "bench [" in captured.err and "28/28" in captured.err
    assert "| branin | log10 regret | 2 x 7 |" in captured.out
    assert main(argv) == 0  # everything already there
    assert "4 of 4 runs already in" in capsys.readouterr().err

    assert main(["summary", str(out)]) == 0
    assert "| problem | quantity | seeds x calls | rf | ert |" in capsys.readouterr().out
    assert main(["summary", str(out), "--paired", "ert"]) == 0
    assert "| problem | ert < rf |" in capsys.readouterr().out
    assert main(["summary", str(out), "--paired", "gp"]) == 2
    assert "no runs of 'gp'" in capsys.readouterr().err
    pytest.importorskip(
        "matplotlib", reason="treebo plot needs matplotlib: pip install 'treebo[plot]'"
    )
    assert main(["plot", str(out), "--out", str(figures)]) == 0
    assert (figures / "branin.png").exists()


def test_bench_config_file(tmp_path, capsys):
    config = tmp_path / "grid.json"
    config.write_text(
        json.dumps(
            {
                "problems": ["bohachevsky"],
                "surrogates": ["rf"],
                "seeds": ["3"],
                "n_calls": 6,
                "out": str(tmp_path / "r"),
                "overrides": {"n_candidates": 256},
            }
        )
    )
    assert main(["bench", "--config", str(config), "--quiet"]) == 0
    (line,) = (tmp_path / "r" / "bohachevsky.jsonl").read_text().splitlines()
    assert json.loads(line)["seed"] == 3
    config.write_text(json.dumps({"problem": ["branin"]}))
    assert main(["bench", "--config", str(config)]) == 2
    assert "unknown keys ['problem']" in capsys.readouterr().err


def test_failed_runs_exit_with_1(tmp_path, capsys):
    argv = [
        "bench",
        "--problems",
        "ising",
        "--surrogates",
        "rf",
        "--seeds",
        "0",
        "--n-calls",
        "6",
        "--param",
        "ising:lam=-1",
        "--out",
        str(tmp_path),
        "--quiet",
        *FAST,
    ]
    assert main(argv) == 1
    assert "ising/rf/seed 0" in capsys.readouterr().err


def test_python_dash_m_treebo():
    done = subprocess.run(
        [sys.executable, "-m", "treebo", "summary", "/nonexistent"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "does not exist" in done.stderr
    done = subprocess.run(
        [sys.executable, "-m", "treebo", "frobnicate"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 2 and "invalid choice" in done.stderr


# Modules that `import treebo`, `treebo --help` and `treebo list` must not load: together
# they took seconds (scikit-learn, SciPy's optimizers, and pandas, sympy and matplotlib
# through ngboost). Listing the problems needs NumPy and SciPy's special functions.
HEAVY = (
    "sklearn",
    "scipy.optimize",
    "scipy.stats",
    "pandas",
    "matplotlib",
    "dask",
    "ngboost",
    "stochtree",
    "qmcpy",
    "treebo.optimizer",
    "treebo.loop",
    "treebo.surrogates.base",
)


def _loaded_after(code, modules=HEAVY):
    probe = f"import sys\n{code}\nprint(sorted(m for m in {modules!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def test_import_help_and_list_load_no_heavy_module():
    assert _loaded_after("import treebo", (*HEAVY, "numpy")) == "[]"
    assert (
        _loaded_after(
            "from treebo.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
            (*HEAVY, "numpy"),
        )
        == "[]"
    )
    assert _loaded_after("from treebo.cli import main\nmain(['list'])") == "[]"
    # The public names still resolve, to the objects their modules define.
    assert (
        _loaded_after(
            "from treebo import minimize, Real, Optimizer, Prediction\n"
            "import treebo.loop, treebo.space\n"
            "assert minimize is treebo.loop.minimize\n"
            "assert Real is treebo.space.Real"
        )
        != "[]"
    )


def test_list_names_the_extra_of_a_missing_surrogate(monkeypatch, capsys):
    # A None entry in sys.modules makes the module look uninstalled.
    monkeypatch.setitem(sys.modules, "ngboost", None)
    assert main(["list"]) == 0
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.split()[:1] == ["ngboost"]]
    assert "not installed: pip install 'treebo[ngboost]'" in line


def test_a_closed_standard_output_gives_no_traceback():
    # `treebo list | head -2`: the reader is gone before treebo writes. Python's docs advise
    # exit status 1 and nothing on stderr.
    proc = subprocess.Popen(
        [sys.executable, "-m", "treebo", "list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=300) == 1
    assert stderr == ""


def _stored_trials(path):
    from treebo.storage import read_study

    return [(row["number"], row["status"], row["value"]) for row in read_study(path)["trials"]]


def test_minimize_storage_records_every_trial_and_an_identical_call_resumes(tmp_path, capsys):
    db = tmp_path / "study.db"
    argv = [
        "minimize",
        "branin",
        "--surrogate",
        "rf",
        "--n-calls",
        "7",
        "--seed",
        "1",
        *FAST,
        "--storage",
        str(db),
        "--quiet",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    trials = _stored_trials(db)
    assert [(number, status) for number, status, _ in trials] == [(i, "complete") for i in range(7)]
    assert f"best value {min(value for *_, value in trials):.10g}" in out
    assert "7 evaluations, 7 of them in this call" in out

    assert main(argv) == 0  # the study is complete: nothing is evaluated again
    assert "7 evaluations, 0 of them in this call" in capsys.readouterr().out
    assert _stored_trials(db) == trials

    assert main([*argv[:5], "9", *argv[6:]]) == 0  # a larger budget adds only the missing calls
    assert "9 evaluations, 2 of them in this call" in capsys.readouterr().out
    assert _stored_trials(db)[:7] == trials and len(_stored_trials(db)) == 9


def test_a_problems_setting_options_override_its_preset(tmp_path, capsys):
    from treebo.storage import read_study

    db = tmp_path / "study.db"
    base = ["minimize", "branin", "--n-calls", "7", *FAST, "--storage", str(db), "--quiet"]
    options = ["--local-steps", "false", "--n-box-candidates", "64", "--y-transform", "standardize"]
    assert main([*base, *options, "--failure-value", "9.5"]) == 0
    stored = read_study(db)["meta"]["settings"]
    assert (stored["local_steps"], stored["n_box_candidates"]) == (False, 64)
    assert (stored["y_transform"], stored["failure_value"]) == ("standardize", 9.5)
    capsys.readouterr()
    # The run's identity: the same command resumes it, another setting is another run.
    assert main([*base, *options, "--failure-value", "9.5"]) == 0
    assert "7 evaluations, 0 of them in this call" in capsys.readouterr().out
    assert main([*base, *options]) == 2
    assert "failure_value: stored 9.5, given 'worst'" in capsys.readouterr().err
    # Settings that are not the preset's to change are refused, in one line.
    for refused in (["--resume-pending", "fail"], ["--maximize"]):
        assert main(["minimize", "branin", *refused]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"treebo minimize: error: {refused[0]} apply to a user's objective")


def test_setting_options_say_what_is_wrong_with_a_value(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit):  # argparse: the value cannot be read
        main(["minimize", "branin", "--explore-every", "often"])
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "usage: treebo minimize [TARGET] [--command CMD] [options]",
        "treebo minimize: error: argument --explore-every: 'often' is not "
        "'auto' or an integer >= 0",
    ]
    with pytest.raises(SystemExit):
        main(["minimize", "branin", "--surrogate-params", "[" * 200])
    assert "argument --surrogate-params: the value is nested deeper than 100 levels" in (
        capsys.readouterr().err
    )
    # Read, but not allowed: one line naming the setting.
    assert main(["minimize", "branin", "--n-calls", "7", "--max-halvings", "-1"]) == 2
    assert capsys.readouterr().err == (
        "treebo minimize: error: max_halvings must be an integer >= 0, got -1\n"
    )


def test_minimize_storage_resumes_an_interrupted_run(tmp_path, capsys, monkeypatch):
    from treebo.problems.continuous import Branin

    db = tmp_path / "study.db"
    argv = [
        "minimize",
        "branin",
        "--surrogate",
        "rf",
        "--n-calls",
        "8",
        *FAST,
        "--storage",
        str(db),
    ]
    evaluate, calls = Branin.evaluate, []

    def interrupted_at_the_sixth(self, x):
        calls.append(x)
        if len(calls) == 6:
            raise KeyboardInterrupt
        return evaluate(self, x)

    monkeypatch.setattr(Branin, "evaluate", interrupted_at_the_sixth)
    assert main(argv) == 130
    assert "the same command resumes the study in" in capsys.readouterr().err
    assert [status for _, status, _ in _stored_trials(db)] == ["complete"] * 5 + ["pending"]

    monkeypatch.setattr(Branin, "evaluate", evaluate)
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "8 evaluations, 3 of them in this call" in captured.out
    assert "branin/rf [" in captured.err and "8/8" in captured.err
    assert [status for _, status, _ in _stored_trials(db)] == ["complete"] * 8


def test_minimize_storage_of_another_run_is_refused(tmp_path, capsys):
    db = tmp_path / "study.db"
    base = ["minimize", "branin", "--n-calls", "6", *FAST, "--storage", str(db), "--quiet"]
    assert main([*base, "--surrogate", "rf"]) == 0
    capsys.readouterr()
    assert main([*base, "--surrogate", "ert"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("treebo minimize: error:") and "surrogate: stored 'rf'" in err
    assert main([*base, "--surrogate", "rf", "--out", str(tmp_path)]) == 2
    assert "cannot be combined" in capsys.readouterr().err


def test_minimize_out_never_writes_a_second_record_of_a_run(tmp_path, capsys):
    argv = [
        "minimize",
        "branin",
        "--surrogate",
        "rf",
        "--n-calls",
        "6",
        *FAST,
        "--out",
        str(tmp_path),
        "--quiet",
    ]
    assert main(argv) == 0
    capsys.readouterr()
    path = tmp_path / "branin.jsonl"
    first = path.read_text()
    assert main(argv) == 2  # refused before running: no output but the reason
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "already holds a record of this run (branin/rf, seed 0, 6 evaluations)" in captured.err
    assert path.read_text() == first
    assert main([*argv[:5], "7", *argv[6:]]) == 0  # a longer run is a new record
    assert len(path.read_text().splitlines()) == 2
    # Records kept compressed (as the committed ones are) count too.
    path.with_suffix(".jsonl.gz").write_bytes(gzip.compress(path.read_bytes()))
    path.unlink()
    assert main(argv) == 2
    assert f"{path}.gz already holds a record of this run" in capsys.readouterr().err
    assert not path.exists()
    assert main(argv) == 2  # and it covers the shorter one


def test_minimize_runs_and_resumes_a_conditional_problem(tmp_path, capsys):
    from treebo.storage import read_study

    db = tmp_path / "models.db"
    argv = [
        "minimize",
        "model_selection_wine",
        "--surrogate",
        "rf",
        "--n-calls",
        "12",
        *FAST,
        "--storage",
        str(db),
        "--quiet",
    ]
    assert main(argv) == 0
    assert main([*argv[:5], "14", *argv[6:]]) == 0
    assert "14 evaluations, 2 of them in this call" in capsys.readouterr().out
    rows = read_study(db)["trials"]
    assert [row["status"] for row in rows] == ["complete"] * 14
    # Every stored point has nulls exactly at its inactive hyperparameters.
    from treebo.problems import get_problem

    space = get_problem("model_selection_wine").space
    for row in rows:
        assert space.point_to_json(space.point_from_json(row["point"])) == row["point"]
    assert len({row["point"][0] for row in rows}) > 1  # more than one model family was tried


# -- faults: an --out or a storage that cannot be used is one line, before the run ---------


@pytest.mark.fault
def test_an_out_that_is_a_file_is_refused_before_the_run(capsys, tmp_path):
    out = tmp_path / "results"
    out.write_text("not a directory\n")
    code = main(
        [
            "minimize",
            "branin",
            "--surrogate",
            "rf",
            "--n-calls",
            "8",
            "--quiet",
            *FAST,
            "--out",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""  # nothing ran
    assert captured.err.strip() == (
        f"treebo minimize: error: --out {out}: {out} is a file, not a directory; nothing was run"
    )
    assert out.read_text() == "not a directory\n"


def _treebo_as(prefix, *args):
    from pathlib import Path

    import treebo

    env = {**os.environ, "PYTHONPATH": str(Path(treebo.__file__).parents[1])}
    return subprocess.run(
        [*prefix, sys.executable, "-m", "treebo", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.fault
def test_an_unwritable_out_or_storage_is_one_line_and_a_failure_before_the_run(
    user_dir, unprivileged_prefix
):
    locked = user_dir / "locked"
    locked.mkdir(mode=0o555)
    os.chown(locked, *(user_dir.stat().st_uid, user_dir.stat().st_gid))
    for args in (["--out", str(locked)], ["--storage", str(locked / "s.db")]):
        proc = _treebo_as(
            unprivileged_prefix,
            "minimize",
            "branin",
            "--surrogate",
            "rf",
            "--n-calls",
            "8",
            "--quiet",
            *FAST,
            *args,
        )
        assert proc.returncode != 0 and proc.stdout == "", proc.stderr
        (line,) = proc.stderr.strip().splitlines()  # one line, no traceback
        assert line.startswith("treebo minimize: error: ") and str(locked) in line
        assert "not writable by this user" in line


# -- a user's own objective --------------------------------------------------------------------
ROOT = str(__import__("pathlib").Path(__import__("treebo").__file__).resolve().parent.parent)
USER_FAST = ["--n-candidates", "256", "--quiet"]

SPACE_TOML = """
[[dimensions]]
name = "lr"
type = "Real"
low = 0.0001
high = 1.0
prior = "log-uniform"

[[dimensions]]
name = "depth"
type = "Integer"
low = 1
high = 10

[[dimensions]]
name = "kernel"
type = "Categorical"
categories = ["rbf", "linear"]
"""

OBJECTIVE = """
import math

def loss(x):
    return (math.log10(x["lr"]) + 2) ** 2 + (x["depth"] - 4) ** 2 / 10 + (x["kernel"] == "rbf")

loss.space = {"lr": (1e-4, 1.0), "depth": (1, 10), "kernel": ["rbf", "linear"]}

def buggy(x):
    return undefined_name * 2

buggy.space = loss.space
"""


def _loss(x):
    import math

    return (math.log10(x["lr"]) + 2) ** 2 + (x["depth"] - 4) ** 2 / 10 + (x["kernel"] == "rbf")


def _treebo(*argv, cwd, timeout=600):
    env = {**__import__("os").environ, "PYTHONPATH": f"{ROOT}:{cwd}"}
    return subprocess.run(
        [sys.executable, "-m", "treebo", *map(str, argv)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_minimize_a_function_in_a_file_and_resume_it(tmp_path):
    (tmp_path / "objective.py").write_text(OBJECTIVE)
    done = _treebo(
        "minimize",
        "objective.py:loss",
        "--n-calls",
        8,
        "--storage",
        "s.db",
        "--n-candidates",
        256,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "8/8" in done.stderr  # the progress bar
    assert "study s.db: 8 evaluations, 8 of them in this call" in done.stdout
    rows = __import__("treebo.shared_study").shared_study.read_shared(tmp_path / "s.db")[1]
    assert [r["status"] for r in rows] == ["complete"] * 8
    for row in rows:  # the stored values are the function's at the stored points
        assert row["value"] == pytest.approx(_loss(row["x"]), rel=1e-12)
    best = min(rows, key=lambda r: r["value"])
    assert f"best value {best['value']:.10g}" in done.stdout
    assert json.loads(done.stdout.split("x = ", 1)[1]) == best["x"]

    done = _treebo(
        "minimize",
        "objective.py:loss",
        "--n-calls",
        10,
        "--storage",
        "s.db",
        *USER_FAST,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "10 evaluations, 2 of them in this call" in done.stdout
    done = _treebo(
        "minimize",
        "objective.py:loss",
        "--n-calls",
        12,
        "--storage",
        "s.db",
        "--maximize",
        *USER_FAST,
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "direction: stored None, given 'maximize'" in done.stderr


def test_minimize_module_function_with_a_space_file_and_maximize(tmp_path):
    package = tmp_path / "mypkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "model.py").write_text(
        OBJECTIVE.replace("loss.space =", "unused =").replace("buggy.space = loss.space", "")
    )
    (tmp_path / "space.toml").write_text(SPACE_TOML)
    done = _treebo("minimize", "mypkg.model:loss", "--n-calls", 7, *USER_FAST, cwd=tmp_path)
    assert done.returncode == 2 and "has no search space: give --space FILE" in done.stderr
    done = _treebo(
        "minimize",
        "mypkg.model:loss",
        "--space",
        "space.toml",
        "--n-calls",
        7,
        "--maximize",
        "--storage",
        "m.db",
        *USER_FAST,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    meta, rows = __import__("treebo.shared_study").shared_study.read_shared(tmp_path / "m.db")
    assert meta["settings"]["direction"] == "maximize"
    best = max(rows, key=lambda r: r["value"])
    assert f"best value {best['value']:.10g}" in done.stdout
    show = _treebo("show", "m.db", cwd=tmp_path)
    assert show.returncode == 0, show.stderr
    assert "7 trials (7 complete, 0 failed, 0 pending); maximize" in show.stdout
    assert f"best: trial {best['number']}, value {best['value']:.10g}" in show.stdout
    header, *table = show.stdout.splitlines()[2:]
    assert header.split() == ["trial", "status", "value", "lr", "depth", "kernel", "error"]
    assert [line.split()[:2] for line in table] == [[str(i), "complete"] for i in range(7)]


def test_an_objective_with_a_bug_is_reported_at_once_and_stops_the_run(tmp_path):
    (tmp_path / "objective.py").write_text(OBJECTIVE)
    done = _treebo(
        "minimize",
        "objective.py:buggy",
        "--n-calls",
        30,
        "--storage",
        "b.db",
        *USER_FAST,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    err = done.stderr
    first = err.index(
        "treebo: warning: trial 0 failed (the first failed evaluation of this "
        "run; it is recorded as failed and the run goes on; result.errors lists "
        "every failure): NameError: name 'undefined_name' is not defined"
    )
    # The user's frame of the failure, then the reason the run stopped.
    assert err.index('objective.py", line 10, in buggy') > first
    assert (
        "treebo minimize: error: the objective raised NameError in each of the first 5 "
        "evaluations (trials 0 to 4, recorded as failed in b.db); the run stopped"
    ) in err
    assert "failures.py" not in err and "treebo/parallel/" not in err
    assert err.endswith(
        "treebo minimize: on the command line, --catch NameError makes such "
        "failures expected ones\n"
    )
    assert _stored_trials(tmp_path / "b.db") == [(i, "failed", None) for i in range(5)]
    # Named in --catch, the same failures are expected ones: the run spends its budget.
    done = _treebo(
        "minimize",
        "objective.py:buggy",
        "--n-calls",
        7,
        "--catch",
        "NameError",
        *USER_FAST,
        cwd=tmp_path,
    )
    assert done.returncode == 1 and "no successful evaluation in 7" in done.stdout


TRAIN = """
import argparse, json, sys, time

parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float)
parser.add_argument("--depth", type=int)
parser.add_argument("--kernel")
args = parser.parse_args()
loss = (args.lr - 0.1) ** 2 + args.depth / 100
if args.depth == 7:
    print("diverged at epoch 3", file=sys.stderr)
    sys.exit(3)
if args.depth == 9:
    time.sleep(60)
print("epoch 1: loss 12.5")
print(json.dumps({"metrics": {"loss": loss}, "epochs": 10}))
print(f"final loss {loss!r}")
"""

PLAIN_SPACE = """
{"dimensions": [{"name": "lr", "type": "Real", "low": 0.0, "high": 1.0},
                {"name": "depth", "type": "Integer", "low": 1, "high": 10},
                {"name": "kernel", "type": "Categorical", "categories": ["rbf", "linear"]}]}
"""


@pytest.mark.parametrize("json_field", [None, "metrics.loss"])
def test_minimize_runs_a_command_per_evaluation(tmp_path, json_field):
    (tmp_path / "train.py").write_text(TRAIN)
    (tmp_path / "space.json").write_text(PLAIN_SPACE)
    command = f"{sys.executable} train.py --lr {{lr}} --depth {{depth}} --kernel {{kernel}}"
    extra = ["--json-field", json_field] if json_field else []
    done = _treebo(
        "minimize",
        "--command",
        command,
        "--space",
        "space.json",
        "--n-calls",
        12,
        "--timeout",
        5,
        "--storage",
        "c.db",
        "--seed",
        1,
        *extra,
        *USER_FAST,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    rows = __import__("treebo.shared_study").shared_study.read_shared(tmp_path / "c.db")[1]
    assert len(rows) == 12
    for row in rows:
        x = row["x"]
        if x["depth"] == 7:
            assert row["status"] == "failed"
            assert "command exited with status 3" in row["error"]
            assert row["error"].endswith("standard error ends with:\ndiverged at epoch 3")
        elif x["depth"] == 9:
            assert row["status"] == "failed" and "timed out after 5 s" in row["error"]
        else:  # the last number printed (or the JSON field), to the last bit
            assert row["value"] == (x["lr"] - 0.1) ** 2 + x["depth"] / 100
    assert {r["x"]["depth"] for r in rows} & {7, 9}, "no failing point was tried; pick a seed"


def test_command_needs_a_space_and_known_placeholders(tmp_path, capsys):
    (tmp_path / "space.json").write_text(PLAIN_SPACE)
    space = str(tmp_path / "space.json")
    assert main(["minimize", "--command", "echo {lr}"]) == 2
    assert "--command needs --space FILE" in capsys.readouterr().err
    assert main(["minimize", "--command", "echo {learning_rate}", "--space", space]) == 2
    assert (
        "placeholder {learning_rate} names no dimension; the dimensions are ['lr', 'depth', "
        "'kernel']"
    ) in capsys.readouterr().err
    assert main(["minimize", "branin", "--space", space]) == 2
    assert "--space apply to a user's objective" in capsys.readouterr().err
    assert main(["minimize", "nofile.py:f"]) == 2
    assert "objective file 'nofile.py' does not exist" in capsys.readouterr().err
    assert main(["minimize"]) == 2
    assert "minimize needs a problem name" in capsys.readouterr().err


ASK_TELL_WORKER = """
import json, subprocess, sys

def treebo(*args):
    done = subprocess.run([sys.executable, "-m", "treebo", *args], capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout

for _ in range({n}):
    asked = json.loads(treebo("ask", "--storage", "shared.db", "--space", "space.toml",
                              "--n-candidates", "256"))
    x = asked["x"]
    value = (x["lr"] - 0.01) ** 2 + x["depth"]
    print(json.dumps({{"trial": asked["trial"], "x": x, "value": value}}), flush=True)
    treebo("tell", "--storage", "shared.db", str(asked["trial"]), repr(value))
"""


def test_processes_ask_and_tell_one_study_at_once(tmp_path):
    (tmp_path / "space.toml").write_text(SPACE_TOML)
    (tmp_path / "worker.py").write_text(ASK_TELL_WORKER.format(n=3))
    env = {**__import__("os").environ, "PYTHONPATH": ROOT}
    workers = [
        subprocess.Popen(
            [sys.executable, "worker.py"],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    seen = []
    for worker in workers:
        out, err = worker.communicate(timeout=900)
        assert worker.returncode == 0, err
        seen += [json.loads(line) for line in out.splitlines()]
    meta, rows = __import__("treebo.shared_study").shared_study.read_shared(tmp_path / "shared.db")
    # Nine asks, nine distinct trials, each told once with its worker's value: none lost,
    # none given to two workers.
    assert sorted(s["trial"] for s in seen) == list(range(9))
    assert [r["status"] for r in rows] == ["complete"] * 9
    for s in seen:
        assert rows[s["trial"]]["x"] == s["x"] and rows[s["trial"]]["value"] == s["value"]
    assert len({json.dumps(r["x"], sort_keys=True) for r in rows}) == 9


def test_ask_and_tell_errors_and_show(tmp_path, capsys):
    db = str(tmp_path / "s.db")
    space = tmp_path / "space.toml"
    space.write_text(SPACE_TOML)
    assert main(["ask", "--storage", db]) == 2
    assert "the first ask needs the search space (--space FILE)" in capsys.readouterr().err
    assert main(["ask", "--storage", db, "--space", str(space), "--seed", "4"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["trial"] == 0 and set(first["x"]) == {"lr", "depth", "kernel"}
    assert main(["ask", "--storage", db]) == 0  # later asks use the stored space
    assert json.loads(capsys.readouterr().out)["trial"] == 1
    assert main(["tell", "--storage", db, "0", "0.25"]) == 0
    assert "trial 0: complete; best value 0.25" in capsys.readouterr().out
    assert main(["tell", "--storage", db, "0", "0.5"]) == 2
    assert "trial 0 of" in capsys.readouterr().err
    assert main(["tell", "--storage", db, "1", "--failed", "out of memory"]) == 0
    assert main(["tell", "--storage", db, "5", "1"]) == 2
    assert "has no trial 5 (its trials are 0 to 1)" in capsys.readouterr().err
    assert main(["tell", "--storage", db, "1"]) == 2
    assert main(["ask", "--storage", db, "--maximize"]) == 2
    assert "direction" in capsys.readouterr().err
    assert main(["show", db]) == 0
    out = capsys.readouterr().out
    assert "2 trials (1 complete, 1 failed, 0 pending); minimize" in out
    assert "best: trial 0, value 0.25 at lr=" in out
    assert out.splitlines()[-1].split()[:2] == ["1", "failed"]
    assert out.splitlines()[-1].endswith("out of memory")

    # A study made by ask and tell goes on with minimize (its seed and settings are adopted).
    (tmp_path / "objective.py").write_text(OBJECTIVE)
    assert (
        main(
            [
                "minimize",
                f"{tmp_path / 'objective.py'}:loss",
                "--space",
                str(space),
                "--storage",
                db,
                "--n-calls",
                "4",
                "--quiet",
            ]
        )
        == 0
    )
    assert "4 evaluations, 2 of them in this call" in capsys.readouterr().out
    rows = __import__("treebo.shared_study").shared_study.read_shared(db)[1]
    assert [r["status"] for r in rows] == ["complete", "failed", "complete", "complete"]
    assert rows[3]["value"] == pytest.approx(_loss(rows[3]["x"]), rel=1e-12)


# -- multi-fidelity ----------------------------------------------------------------------------
_TRAIN = """
from treebo import Real

def train(x, epochs):
    # Fewer epochs look worse; the best learning rate is 0.3 at every budget.
    return (x["lr"] - 0.3) ** 2 + 1.0 / epochs

train.space = {"lr": Real(0.0, 1.0)}

def train_reporting(x, epochs, report):
    for epoch in range(1, epochs + 1):
        report(epoch, (x["lr"] - 0.3) ** 2 + 1.0 / epoch)
    return (x["lr"] - 0.3) ** 2 + 1.0 / epochs

train_reporting.space = train.space

def train_continued(x, epochs, checkpoint):
    # The saved state is the number of epochs trained so far.
    state = checkpoint.path / "epochs"
    done = int(state.read_text()) if checkpoint.continues else 0
    assert done == (checkpoint.budget or 0)
    state.write_text(str(epochs))
    return train(x, epochs)

train_continued.space = train.space
"""

_MF = ["--budget-param", "epochs", "--min-budget", "1", "--max-budget", "9"]


def test_minimize_a_users_function_with_budgets(tmp_path, monkeypatch, capsys):
    from treebo.storage import read_study

    (tmp_path / "train.py").write_text(_TRAIN)
    monkeypatch.chdir(tmp_path)
    argv = ["minimize", "train.py:train", *_MF, "--quiet", "--storage", "s.db"]
    assert main([*argv, "--total-budget", "3", "--seed", "0"]) == 0
    first = capsys.readouterr().out
    assert "study s.db: 13 evaluations, 13 of them in this call" in first
    # The same command with a larger total resumes the stored study (and its seed).
    assert main([*argv, "--total-budget", "5"]) == 0
    out = capsys.readouterr().out
    trials = read_study(tmp_path / "s.db")["trials"]
    budgets = [t["point"][-1] for t in trials]
    values = [t["value"] for t in trials]
    assert f"study s.db: {len(trials)} evaluations, {len(trials) - 13} of them in this call" in out
    best = min(v for v, b in zip(values, budgets) if b == 9)
    assert f"best value {best:.10g} at the max budget (epochs = 9)" in out
    assert f"spent {sum(budgets) / 9:.4g} of 5 x max budget ({sum(budgets)} epochs)" in out
    x = trials[values.index(best)]["point"][0]
    assert f'x = {{"lr": {x}}}' in out
    assert all(isinstance(b, int) for b in budgets) and set(budgets) <= {1, 3, 9}


def test_minimize_with_budgets_maximizes_and_reports(tmp_path, monkeypatch, capsys):
    (tmp_path / "train.py").write_text(
        _TRAIN
        + "\ndef score(x, epochs):\n    return -train(x, epochs)\nscore.space = train.space\n"
    )
    monkeypatch.chdir(tmp_path)
    common = [*_MF, "--total-budget", "4", "--seed", "0", "--quiet"]
    assert main(["minimize", "train.py:train", *common]) == 0
    low = capsys.readouterr().out
    assert main(["minimize", "train.py:score", *common, "--maximize"]) == 0
    high = capsys.readouterr().out
    best = float(low.split("best value ")[1].split()[0])
    assert f"best value {-best:.10g} at the max budget" in high
    assert main(["minimize", "train.py:train_reporting", *common, "--intermediate"]) == 0
    out = capsys.readouterr().out
    reported = int(out.split(" intermediate values reported")[0].rsplit("\n", 1)[-1])
    assert reported > 5


def test_minimize_a_command_with_a_budget_placeholder(tmp_path, monkeypatch, capsys):
    (tmp_path / "space.json").write_text(
        json.dumps({"dimensions": [{"type": "Real", "name": "lr", "low": 0.0, "high": 1.0}]})
    )
    monkeypatch.chdir(tmp_path)
    command = f'{sys.executable} -c "print(({{lr}} - 0.3) ** 2 + 1 / {{epochs}})"'
    argv = ["minimize", "--command", command, "--space", "space.json", *_MF]
    assert main([*argv, "--total-budget", "3", "--seed", "0", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "at the max budget (epochs = 9)" in out and "(epochs 1: 9, 3: 3, 9: 1)" in out


def test_minimize_with_budgets_continues_trainings_from_checkpoints(tmp_path, monkeypatch, capsys):
    (tmp_path / "train.py").write_text(_TRAIN)
    monkeypatch.chdir(tmp_path)
    common = [*_MF, "--total-budget", "3", "--seed", "0", "--quiet"]
    assert main(["minimize", "train.py:train", *common]) == 0
    plain = capsys.readouterr().out
    argv = ["minimize", "train.py:train_continued", *common, "--checkpoint-dir", "ckpt"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # The first bracket (9 at 1, 3 at 3, 1 at 9) costs 21 epochs instead of 27, and the
    # 6 epochs left start two configurations of the next bracket, at 3.
    assert "on 13 evaluations (epochs 1: 9, 3: 3, 9: 1)" in plain
    assert "(27 epochs) on 15 evaluations (epochs 1: 9, 3: 5, 9: 1)" in out
    assert len(list((tmp_path / "ckpt").iterdir())) == 11  # one directory per configuration
    # A command finds its configuration's directory in {checkpoint}.
    (tmp_path / "space.json").write_text(
        json.dumps({"dimensions": [{"type": "Real", "name": "lr", "low": 0.0, "high": 1.0}]})
    )
    script = (
        "import pathlib, sys; d = pathlib.Path(sys.argv[1]); "
        "(d / sys.argv[3]).touch(); print((float(sys.argv[2]) - 0.3) ** 2 + 1 / int(sys.argv[3]))"
    )
    command = f"{sys.executable} -c '{script}' {{checkpoint}} {{lr}} {{epochs}}"
    argv = ["minimize", "--command", command, "--space", "space.json", *common]
    assert main([*argv, "--checkpoint-dir", "cmd"]) == 0
    made = sorted(p.name for d in (tmp_path / "cmd").iterdir() for p in d.iterdir())
    assert made == ["1"] * 9 + ["3"] * 5 + ["9"]


def test_minimize_with_budgets_promotes_asynchronously_on_request(tmp_path, monkeypatch, capsys):
    from treebo.storage import read_study

    (tmp_path / "train.py").write_text(_TRAIN)
    monkeypatch.chdir(tmp_path)
    common = [*_MF, "--total-budget", "3", "--seed", "0", "--quiet"]
    budgets = {}
    for promotion in ("synchronous", "asynchronous"):
        db = f"{promotion}.db"
        assert (
            main(["minimize", "train.py:train", *common, "--promotion", promotion, "--storage", db])
            == 0
        )
        budgets[promotion] = [t["point"][-1] for t in read_study(tmp_path / db)["trials"]]
    # Synchronous: the first rung's 9 evaluations all come before its first promotion.
    assert budgets["synchronous"][:10] == [1] * 9 + [3]
    # ASHA promotes the best of the first three as soon as they are told.
    assert budgets["asynchronous"][:4] == [1, 1, 1, 3]
    with pytest.raises(SystemExit) as exit_status:
        main(["minimize", "train.py:train", *common, "--promotion", "asha"])
    assert exit_status.value.code == 2
    assert "argument --promotion: invalid choice: 'asha'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--max-budget", "9"], "missing: --budget-param, --min-budget, --total-budget"),
        (["--budget-param", "epochs", "--min-budget", "1"], "missing: --max-budget"),
        ([*_MF, "--total-budget", "3", "--n-calls", "20"], "--n-calls cannot be combined"),
        ([*_MF, "--total-budget", "0"], "--total-budget must be a positive number"),
        ([*_MF, "--total-budget", "3", "--eta", "1"], "--eta must be a number > 1"),
        (
            [
                "--budget-param",
                "epoch",
                "--min-budget",
                "1",
                "--max-budget",
                "9",
                "--total-budget",
                "3",
            ],
            "--budget-param: train.py:train has no parameter 'epoch'",
        ),
        (
            [*_MF, "--total-budget", "3", "--intermediate"],
            "--intermediate: train.py:train has no parameter 'report'",
        ),
        (
            [*_MF, "--total-budget", "3", "--checkpoint-dir", "c"],
            "--checkpoint-dir: train.py:train has no parameter 'checkpoint'",
        ),
        (
            [*_MF[:4], "--max-budget", "0.5", "--total-budget", "3"],
            "--min-budget must be at most --max-budget, got 1 and 0.5",
        ),
    ],
)
def test_minimize_with_budgets_names_the_bad_argument(
    tmp_path, monkeypatch, capsys, extra, message
):
    (tmp_path / "train.py").write_text(_TRAIN)
    monkeypatch.chdir(tmp_path)
    assert main(["minimize", "train.py:train", *extra]) == 2
    assert message in capsys.readouterr().err


def test_settings_a_run_with_budgets_does_not_take_are_refused(tmp_path, monkeypatch, capsys):
    (tmp_path / "train.py").write_text(_TRAIN)
    monkeypatch.chdir(tmp_path)
    argv = ["minimize", "train.py:train", *_MF, "--total-budget", "3"]
    assert main([*argv, "--y-transform", "log", "--no-local-search"]) == 2
    assert capsys.readouterr().err == (
        "treebo minimize: error: --local-search, --y-transform cannot be combined with "
        "--budget-param: a multi-fidelity run proposes its configurations with settings "
        "of its own\n"
    )
    assert main([*argv, "--n-candidates", "300"]) == 2
    assert "--n-candidates cannot be combined with --budget-param" in capsys.readouterr().err
    assert not (tmp_path / "s.db").exists()


def test_budget_options_are_refused_for_a_problem(capsys):
    assert main(["minimize", "branin", "--budget-param", "epochs", "--max-budget", "9"]) == 2
    err = capsys.readouterr().err
    assert "--budget-param, --max-budget: the problem 'branin' has no budget" in err
    # Refused before the space file is read.
    argv = ["minimize", "--command", "echo {lr}", "--space", "missing.json", *_MF]
    assert main([*argv, "--total-budget", "3", "--intermediate"]) == 2
    assert "--intermediate applies to a Python function" in capsys.readouterr().err


# -- untrusted input: space files and study files are read with bounded size and depth -----------
DEEP = 100_000
DEEP_SPACE_FILES = {
    "lists.json": '{"dimensions": ' + "[" * DEEP + "]" * DEEP + "}",
    "objects.json": '{"dimensions": [' + '{"a": ' * DEEP + "1" + "}" * DEEP + "]}",
    "arrays.toml": "dimensions = " + "[" * DEEP + "]" * DEEP + "\n",
    "tables.toml": "x = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n",
}


def _one_line_error(done, command, *named):
    """The one line a failed ``treebo command`` printed, after checking there is no more."""
    assert done.returncode != 0 and done.stdout == ""
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"treebo {command}: error: ")
    assert len(done.stderr) < 300, done.stderr[:1000]
    for text in named:
        assert text in line
    return line


@pytest.mark.fault
@pytest.mark.parametrize("name", sorted(DEEP_SPACE_FILES))
def test_a_deeply_nested_space_file_is_one_line_naming_the_file(name, tmp_path):
    (tmp_path / name).write_text(DEEP_SPACE_FILES[name])
    (tmp_path / "objective.py").write_text(OBJECTIVE)
    for command, args in (
        ("minimize", ["objective.py:loss", "--n-calls", 3, "--quiet"]),
        ("ask", ["--storage", "s.db"]),
    ):
        done = _treebo(command, *args, "--space", name, cwd=tmp_path, timeout=120)
        _one_line_error(done, command, name, "nested deeper than 100 levels")
    assert not (tmp_path / "s.db").exists()


def _study_with_a_category(tmp_path):
    """A study made by ``treebo ask`` whose space has the categorical dimension 'kernel'."""
    db = tmp_path / "s.db"
    (tmp_path / "space.toml").write_text(SPACE_TOML)
    done = _treebo("ask", "--storage", db, "--space", "space.toml", "--seed", 0, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return db


def _store_category(db, text):
    """Write ``text`` as the first stored category repr of 'kernel', behind treebo's back."""
    import sqlite3

    conn = sqlite3.connect(db, isolation_level=None)
    (stored,) = conn.execute("SELECT value FROM study WHERE key = 'space'").fetchone()
    description = json.loads(stored)
    (kernel,) = [d for d in description["dimensions"] if d["name"] == "kernel"]
    kernel["categories"][0] = text
    conn.execute("UPDATE study SET value = ? WHERE key = 'space'", (json.dumps(description),))
    conn.close()


CRAFTED_CATEGORIES = {
    "a million signs": (
        "-" * 10**6 + "1",
        "is longer than 65,536 characters (1,000,001 characters)",
    ),
    "deep parentheses": ("(" * 30_000 + "1" + ")" * 30_000, "nested deeper than 100 levels"),
    "5,000 signs": ("-" * 5000 + "1", "nested deeper than 100 levels"),
}


@pytest.mark.fault
@pytest.mark.parametrize("case", sorted(CRAFTED_CATEGORIES))
def test_a_crafted_stored_category_is_one_short_line_for_ask_and_show(case, tmp_path):
    from treebo import shared_study

    db = _study_with_a_category(tmp_path)
    text, cause = CRAFTED_CATEGORIES[case]
    _store_category(db, text)
    for command, args in (("ask", ["--storage", db]), ("show", [db])):
        done = _treebo(command, *args, cwd=tmp_path, timeout=120)
        line = _one_line_error(done, command, str(db), "dimension 'kernel': category", cause)
        assert line.startswith(f"treebo {command}: error: storage {str(db)!r} is damaged: ")
    # The API says the same, in a ValueError.
    for call in (lambda: shared_study.ask(db), lambda: shared_study.read_shared(db)):
        with pytest.raises(ValueError) as caught:
            call()
        assert str(caught.value) == line.split(": error: ", 1)[1]
    # Given the space, the stored one differs from it: a short message says so.
    done = _treebo("ask", "--storage", db, "--space", "space.toml", cwd=tmp_path, timeout=120)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "different search space" in done.stderr and len(done.stderr) < 1000, done.stderr[:3000]


@pytest.mark.fault
def test_a_crafted_stored_setting_is_one_short_line(tmp_path):
    import sqlite3

    db = _study_with_a_category(tmp_path)
    conn = sqlite3.connect(db, isolation_level=None)
    (stored,) = conn.execute("SELECT value FROM study WHERE key = 'settings'").fetchone()
    settings = json.loads(stored)
    settings["surrogate_params"]["max_features"] = "-" * 10**6 + "1"
    conn.execute("UPDATE study SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    conn.close()
    done = _treebo("ask", "--storage", db, cwd=tmp_path, timeout=120)
    _one_line_error(
        done,
        "ask",
        str(db),
        "surrogate_params['max_features']",
        "is longer than 65,536 characters (1,000,001 characters)",
    )


@pytest.mark.fault
def test_a_stored_setting_value_that_is_not_allowed_is_one_line(tmp_path):
    import sqlite3

    db = _study_with_a_category(tmp_path)
    conn = sqlite3.connect(db, isolation_level=None)
    (stored,) = conn.execute("SELECT value FROM study WHERE key = 'settings'").fetchone()
    settings = json.loads(stored)
    settings["direction"] = "upward" * 10_000
    conn.execute("UPDATE study SET value = ? WHERE key = 'settings'", (json.dumps(settings),))
    conn.close()
    for command, args in (("ask", ["--storage", db]), ("show", [db]), ("report", [db, "-o", "r"])):
        done = _treebo(command, *args, cwd=tmp_path, timeout=120)
        line = _one_line_error(done, command, str(db))
        assert "is damaged: direction must be one of ('minimize', 'maximize'), got 'upward" in line


@pytest.mark.fault
def test_a_deeply_nested_param_is_one_line_naming_it(capsys):
    assert main(["minimize", "branin", "--n-calls", "6", "--param", "lam=" + "[" * 50_000]) == 2
    err = capsys.readouterr().err
    assert err == "treebo minimize: error: --param lam is nested deeper than 100 levels\n"


@pytest.mark.fault
def test_stored_settings_that_are_not_a_table_are_one_line(tmp_path):
    import sqlite3

    db = _study_with_a_category(tmp_path)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE study SET value = '[1, 2]' WHERE key = 'settings'")
    conn.close()
    for command, args in (("ask", ["--storage", db]), ("show", [db])):
        done = _treebo(command, *args, cwd=tmp_path, timeout=120)
        line = _one_line_error(done, command, str(db))
        assert line.endswith("is damaged: its settings are [1, 2], not a table")


@pytest.mark.fault
def test_a_stored_space_without_dimensions_is_one_line_for_show_and_report(tmp_path):
    import sqlite3

    db = _study_with_a_category(tmp_path)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE study SET value = '{\"points_are_dicts\": true}' WHERE key = 'space'")
    conn.close()
    for command, args in (("show", [db]), ("report", [db, "-o", "r.html"])):
        done = _treebo(command, *args, cwd=tmp_path, timeout=120)
        line = _one_line_error(done, command, str(db))
        assert "is damaged" in line and "dimensions" in line


# -- several metrics: objectives and constraints -----------------------------------------------
METRICS_TRAIN = """
import json, sys

lr, depth = float(sys.argv[1]), int(sys.argv[2])
print("epoch 1: loss 12.5")
if depth == 3:
    print("diverged")
else:
    error = (lr - 0.3) ** 2 + 0.01 * depth
    print(json.dumps({"error": error, "latency": depth * (1 + lr), "model": "net"}))
"""

METRICS_SPACE = """
{"dimensions": [{"name": "lr", "type": "Real", "low": 0.0, "high": 1.0},
                {"name": "depth", "type": "Integer", "low": 1, "high": 6}]}
"""


def _front_numbers(rows, objectives, signs=None):
    """The trial numbers of the Pareto front of complete rows, computed here from their metrics."""
    from treebo.pareto import non_dominated

    complete = [r for r in rows if r["status"] == "complete"]
    Y = [[(signs or {}).get(o, 1) * r["metrics"][o] for o in objectives] for r in complete]
    return {r["number"] for r, keep in zip(complete, non_dominated(Y)) if keep}


def test_minimize_a_command_that_prints_metrics(tmp_path, capsys):
    from treebo.shared_study import read_shared

    (tmp_path / "train.py").write_text(METRICS_TRAIN)
    (tmp_path / "space.json").write_text(METRICS_SPACE)
    db = str(tmp_path / "m.db")
    argv = ["minimize", "--command", f"{sys.executable} {tmp_path / 'train.py'} {{lr}} {{depth}}"]
    argv += ["--space", str(tmp_path / "space.json"), "--n-calls", "14", "--storage", db]
    argv += ["--objective", "error:min", "--objective", "latency:min", "--seed", "1", *USER_FAST]
    assert main(argv) == 0
    out = capsys.readouterr().out
    _, rows = read_shared(db)
    assert len(rows) == 14
    for row in rows:
        x = row["x"]
        if x["depth"] == 3:  # a last line that is no JSON object: a failed trial, with why
            assert row["status"] == "failed" and row["metrics"] is None
            assert (
                "is 'diverged', not a JSON object of the metrics ['error', 'latency']"
                in (row["error"])
            )
        else:  # every number of the object, to the last bit; "model" is no number
            assert row["metrics"] == {
                "error": (x["lr"] - 0.3) ** 2 + 0.01 * x["depth"],
                "latency": x["depth"] * (1 + x["lr"]),
            }
            assert row["value"] == row["metrics"]["error"]
    assert any(r["status"] == "failed" for r in rows), "no depth 3 was tried; pick a seed"
    front = _front_numbers(rows, ["error", "latency"])
    assert f"Pareto front: {len(front)} points; 13 of 14 evaluations feasible" in out
    assert {int(line.split()[1].rstrip(":")) - 1 for line in out.splitlines()[2:-1]} == front

    assert main(["show", db]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].endswith("objectives error (minimize), latency (minimize); surrogate bwo")
    assert (
        shown[1] == f"Pareto front: {len(front)} points (feasible trials that no other one "
        "beats in every objective)"
    )
    assert shown[2].split() == ["trial", "error", "latency", "lr", "depth"]
    table = shown[3 : 3 + len(front)]
    assert {int(line.split()[0]) for line in table} == front
    firsts = [float(line.split()[1]) for line in table]
    assert firsts == sorted(firsts)  # sorted by the first objective
    header, *listing = shown[3 + len(front) :]
    assert header.split() == [
        "trial",
        "status",
        "error",
        "latency",
        "front",
        "lr",
        "depth",
        "failure",
    ]
    assert {int(line.split()[0]) for line in listing if " * " in line} == front

    # --json-field reads one number: not with --objective.
    assert main([*argv, "--json-field", "error"]) == 2
    assert "--json-field reads one number" in capsys.readouterr().err


METRICS_FUNCTION = """
def vessel(x):
    return {"cost": x["a"] + x["b"], "margin": x["a"] - x["b"], "weight": 2 * x["a"]}

vessel.space = {"a": (0.0, 1.0), "b": (0.0, 1.0)}
"""


def test_minimize_a_function_that_returns_metrics_under_a_constraint(tmp_path, capsys):
    from treebo.shared_study import read_shared

    (tmp_path / "vessel.py").write_text(METRICS_FUNCTION)
    db = str(tmp_path / "v.db")
    argv = ["minimize", f"{tmp_path / 'vessel.py'}:vessel", "--n-calls", "10", "--storage", db]
    argv += ["--objective", "cost:max", "--constraint", "margin <= 0", "--seed", "0", *USER_FAST]
    assert main(argv) == 0
    out = capsys.readouterr().out
    _, rows = read_shared(db)
    feasible = [r for r in rows if r["metrics"]["margin"] <= 0]
    best = max(feasible, key=lambda r: r["metrics"]["cost"])
    assert row_values_are_the_function_s(rows)
    assert (
        f"best feasible value {best['metrics']['cost']:.10g} of cost at evaluation "
        f"{best['number'] + 1}; {len(feasible)} of 10 evaluations feasible"
    ) in out
    assert json.loads(out.split("x = ", 1)[1]) == best["x"]
    # Read back, the stored value is the (maximized) objective's own.
    assert [r["value"] for r in rows] == [r["metrics"]["cost"] for r in rows]

    assert main(["show", db]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].endswith("objective cost (maximize); surrogate bwo")
    assert (
        shown[1] == f"constraints: margin <= 0.0; {len(feasible)} of 10 evaluated trials feasible"
    )
    assert shown[2].startswith(f"best feasible: trial {best['number']}, cost ")
    header, *listing = shown[3:]
    assert header.split() == ["trial", "status", "cost", "margin", "feasible", "a", "b", "failure"]
    assert [line.split()[4] for line in listing] == [
        "yes" if r["metrics"]["margin"] <= 0 else "no" for r in rows
    ]


def row_values_are_the_function_s(rows):
    return all(
        r["metrics"]
        == {
            "cost": r["x"]["a"] + r["x"]["b"],
            "margin": r["x"]["a"] - r["x"]["b"],
            "weight": 2 * r["x"]["a"],
        }
        for r in rows
    )


def test_ask_and_tell_metrics(tmp_path, capsys):
    from treebo.shared_study import read_shared

    db = str(tmp_path / "t.db")
    (tmp_path / "space.json").write_text(METRICS_SPACE)
    new = ["--space", str(tmp_path / "space.json"), "--objective", "error:min"]
    new += ["--objective", "latency:max", "--constraint", "latency <= 6", "--seed", "2", *FAST]
    for _ in range(3):
        assert main(["ask", "--storage", db, *new]) == 0
    capsys.readouterr()
    # A number, a dict that lacks a metric, or text that is no JSON object is refused, and
    # the trial stays pending: a trial is told once, a typo does not spend it.
    for value, message in [
        (
            "0.5",
            "has the objectives ['error', 'latency']: tell a dict (on the command line a "
            "JSON object) holding a number for each of ['error', 'latency']",
        ),
        ('{"error": 0.1}', "the metrics told lack ['latency']"),
        ('{"error": 0.1', "VALUE must be a number or a JSON object of metrics"),
    ]:
        assert main(["tell", "--storage", db, "0", value]) == 2
        assert message in capsys.readouterr().err
    assert [r["status"] for r in read_shared(db)[1]] == ["pending"] * 3
    told = [
        ('{"error": 0.2, "latency": 2, "note": "x"}', "Pareto front of 1 point; 1 of 1"),
        ('{"error": 0.1, "latency": 1}', "Pareto front of 2 points; 2 of 2"),
        ('{"error": 0.05, "latency": 9}', "Pareto front of 2 points; 2 of 3"),  # infeasible
    ]
    for number, (value, message) in enumerate(told):
        assert main(["tell", "--storage", db, str(number), value]) == 0
        assert f"trial {number}: complete; {message} evaluations feasible" in (
            capsys.readouterr().out
        )
    rows = read_shared(db)[1]
    assert [r["metrics"] for r in rows] == [
        {"error": 0.2, "latency": 2},
        {"error": 0.1, "latency": 1},
        {"error": 0.05, "latency": 9},
    ]
    assert main(["show", db, "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [line["metrics"] for line in lines] == [r["metrics"] for r in rows]
    assert main(["show", db]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[1] == "constraints: latency <= 6.0; 2 of 3 evaluated trials feasible"
    assert [line.split()[:3] for line in shown[4:6]] == [["1", "0.1", "1"], ["0", "0.2", "2"]]
    assert [line.split()[4:6] for line in shown[7:]] == [
        ["yes", "*"],
        ["yes", "*"],
        ["no"] + [f"{rows[2]['x']['lr']:.6g}"],
    ]

    # A study of one number refuses a dict, and the reverse message says what it takes.
    plain = str(tmp_path / "plain.db")
    assert main(["ask", "--storage", plain, "--space", str(tmp_path / "space.json"), *FAST]) == 0
    assert main(["tell", "--storage", plain, "0", '{"error": 0.1}']) == 2
    assert "has one objective and no named metrics: tell a number" in capsys.readouterr().err
    assert main(["tell", "--storage", plain, "0", "0.25"]) == 0
    assert "trial 0: complete; best value 0.25" in capsys.readouterr().out

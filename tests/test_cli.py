"""The ``treebo`` command."""

import json
import subprocess
import sys

import pytest

from treebo.cli import main

FAST = ["--n-candidates", "256"]


def test_list(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in ("branin", "hartmann6", "ising", "contamination", "automl_digits", "bwo", "rf",
                 "ert", "gp", "continuous"):
        assert name in out


def test_minimize_shows_progress_and_the_result(capsys, tmp_path):
    code = main(["minimize", "branin", "--surrogate", "rf", "--n-calls", "8", "--seed", "2",
                 *FAST, "--out", str(tmp_path)])
    assert code == 0
    captured = capsys.readouterr()
    assert "branin/rf [" in captured.err and "8/8" in captured.err and "best=" in captured.err
    assert "best value" in captured.out and "regret" in captured.out
    (line,) = (tmp_path / "branin.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert (record["surrogate"], record["seed"], record["n_evaluated"]) == ("rf", 2, 8)
    assert f"{record['best_so_far'][-1]:.10g}" in captured.out


def test_minimize_with_problem_parameters(capsys):
    code = main(["minimize", "contamination", "--surrogate", "rf", "--n-calls", "6", "--quiet",
                 "--param", "instance=466", "--param", "lam=0", *FAST])
    assert code == 0
    assert "optimum 21.14" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["minimize", "brannin"], r"unknown problem 'brannin'.*'branin'"),
    (["minimize", "branin", "--surrogate", "xgb"], r"unknown surrogate.*'bwo'"),
    (["minimize", "ising", "--param", "lambda=1"], r"does not take.*'lam'"),
    (["minimize", "ising", "--param", "lam"], "KEY=VALUE"),
    (["bench", "--problems", "nope", "--out", "x"], r"unknown problem 'nope'.*groups"),
    (["bench", "--problems", "branin"], "--out"),
    (["bench", "--problems", "branin", "--out", "x", "--seeds", "4-2"], "seeds"),
    (["plot", "/nonexistent/dir", "--out", "x"], "does not exist"),
    (["minimize", "automl", "--param", "dataset=authorship"], "authorship"),
])
def test_bad_arguments_exit_with_2_and_say_why(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"treebo {argv[0]}: error:")
    assert pytest.importorskip("re").search(message, err)


def test_bench_plot_and_summary(tmp_path, capsys):
    out, figures = tmp_path / "results", tmp_path / "figures"
    argv = ["bench", "--problems", "branin", "--surrogates", "rf", "ert", "--seeds", "0-1",
            "--n-calls", "7", "--out", str(out), "--n-jobs", "1", *FAST]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "bench [" in captured.err and "4/4" in captured.err
    assert "| branin | log10 regret | 2 x 7 |" in captured.out
    assert main(argv) == 0  # everything already there
    assert "4 of 4 runs already in" in capsys.readouterr().err

    assert main(["summary", str(out)]) == 0
    assert "| problem | quantity | seeds x calls | rf | ert |" in capsys.readouterr().out
    assert main(["summary", str(out), "--paired", "ert"]) == 0
    assert "| problem | ert < rf |" in capsys.readouterr().out
    assert main(["summary", str(out), "--paired", "gp"]) == 2
    assert "no runs of 'gp'" in capsys.readouterr().err
    pytest.importorskip("matplotlib")
    assert main(["plot", str(out), "--out", str(figures)]) == 0
    assert (figures / "branin.png").exists()


def test_bench_config_file(tmp_path, capsys):
    config = tmp_path / "grid.json"
    config.write_text(json.dumps({"problems": ["bohachevsky"], "surrogates": ["rf"],
                                  "seeds": ["3"], "n_calls": 6, "out": str(tmp_path / "r"),
                                  "overrides": {"n_candidates": 256}}))
    assert main(["bench", "--config", str(config), "--quiet"]) == 0
    (line,) = (tmp_path / "r" / "bohachevsky.jsonl").read_text().splitlines()
    assert json.loads(line)["seed"] == 3
    config.write_text(json.dumps({"problem": ["branin"]}))
    assert main(["bench", "--config", str(config)]) == 2
    assert "unknown keys ['problem']" in capsys.readouterr().err


def test_failed_runs_exit_with_1(tmp_path, capsys):
    argv = ["bench", "--problems", "ising", "--surrogates", "rf", "--seeds", "0", "--n-calls",
            "6", "--param", "ising:lam=-1", "--out", str(tmp_path), "--quiet", *FAST]
    assert main(argv) == 1
    assert "ising/rf/seed 0" in capsys.readouterr().err


def test_python_dash_m_treebo():
    done = subprocess.run([sys.executable, "-m", "treebo", "summary", "/nonexistent"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2 and "does not exist" in done.stderr
    done = subprocess.run([sys.executable, "-m", "treebo", "frobnicate"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 2 and "invalid choice" in done.stderr

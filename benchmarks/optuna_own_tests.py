"""Run Optuna's own tests of several objectives and constraints with TreeBOSampler swapped in.

Optuna's sampler tests construct their sampler by class name (``GPSampler(...)``,
``NSGAIISampler(...)``, ``TPESampler(...)``). This script copies the chosen
test files out of a clone of Optuna's repository at a tag, adds a conftest
that replaces those names, in each test module and in ``optuna.samplers``, by
a factory of ``TreeBOSampler`` (keeping the arguments it shares with them:
``n_startup_trials``, ``seed``, ``constraints_func``; the others, such as
``population_size``, have no counterpart and are dropped), and runs the
chosen tests with pytest (the module-level imports of ``optuna._gp``, which
need PyTorch and which the chosen tests do not use, are left out). Optuna's
``MultiObjectiveSamplerTestCase`` (shipped with Optuna, in
``optuna.testing.pytest_samplers``) runs with a ``TreeBOSampler`` fixture. A
test that builds no ``TreeBOSampler`` fails.

The tests chosen are those that run a sampler through the public API in a
study of several objectives or with constraints:

- ``tests/samplers_tests/test_gp.py``: ``test_constraints_func`` (one and two
  objectives, constraint values -1, 0, 1, -inf, inf), ``test_constraints_func_nan``;
- ``tests/samplers_tests/test_nsgaii.py`` and ``test_nsgaiii.py``:
  ``test_constraints_func_none``, ``test_constraints_func``,
  ``test_constraints_func_nan``, and (NSGA-II) ``test_set_constraint_with_different_keys``;
- ``tests/samplers_tests/tpe_tests/test_sampler.py``:
  ``test_constraints_func_deprecation_warning``,
  ``test_constrained_sample_independent_zero_startup``;
- ``MultiObjectiveSamplerTestCase``: ``sample_independent`` in a study of two
  objectives, over 16 distributions.

Usage::

    python benchmarks/optuna_own_tests.py [--repo GIT_DIR] [--ref TAG] [--keep DIR]

``--repo`` is a git directory of Optuna (e.g. from ``git clone --bare``);
``--ref`` defaults to ``v5.0.0`` when the clone has that tag, else
``v5.0.0-rc1`` (whose copies of these test files are those of the later
master too). It prints the count of passed and failed tests and, for each
failure, its first line of error.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

DEFAULT_REPO = "/work/.mirror/optuna+optuna/repo"

#: Test file -> the tests of it to run (pytest ``-k`` would match too much).
SELECTION = {
    "tests/samplers_tests/test_gp.py": ["test_constraints_func", "test_constraints_func_nan"],
    "tests/samplers_tests/test_nsgaii.py": [
        "test_constraints_func_none",
        "test_constraints_func",
        "test_constraints_func_nan",
        "test_set_constraint_with_different_keys",
    ],
    "tests/samplers_tests/test_nsgaiii.py": [
        "test_constraints_func_none",
        "test_constraints_func",
        "test_constraints_func_nan",
    ],
    "tests/samplers_tests/tpe_tests/test_sampler.py": [
        "test_constraints_func_deprecation_warning",
        "test_constrained_sample_independent_zero_startup",
    ],
}

# Small proposals: these tests check behaviour, not search quality.
CONFTEST = """
import pytest

import optuna
from treebo.integration.optuna import TreeBOSampler

pytest.register_assert_rewrite("optuna.testing.pytest_samplers")

FAST = {
    "n_candidates": 1000,
    "surrogate_params": {"n_estimators": 30},
    "optimizer_kwargs": {"n_local_candidates": 500, "n_jump_candidates": 200},
}
SHARED = ("n_startup_trials", "seed", "constraints_func")
SWAPPED = ("GPSampler", "NSGAIISampler", "NSGAIIISampler", "TPESampler")


BUILT = []


def treebo_sampler(*args, **kwargs):
    BUILT.append(kwargs)
    return TreeBOSampler(**FAST, **{k: v for k, v in kwargs.items() if k in SHARED})


@pytest.fixture(autouse=True)
def _swap_in_treebo(request, monkeypatch):
    for name in SWAPPED:
        monkeypatch.setattr(optuna.samplers, name, treebo_sampler)
        if request.module is not None and hasattr(request.module, name):
            monkeypatch.setattr(request.module, name, treebo_sampler)
    before = len(BUILT)
    yield
    # A test that built no TreeBOSampler did not test it.
    assert len(BUILT) > before, "the test built no TreeBOSampler"
"""

TEST_CASE = """
import pytest

from optuna.testing.pytest_samplers import MultiObjectiveSamplerTestCase

from conftest import treebo_sampler


class TestTreeBOMultiObjective(MultiObjectiveSamplerTestCase):
    @pytest.fixture
    def sampler(self):
        return treebo_sampler
"""


def _default_ref(repo: str) -> str:
    tags = subprocess.run(
        ["git", "--git-dir", repo, "tag", "--list", "v5.0.0*"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return "v5.0.0" if "v5.0.0" in tags else "v5.0.0-rc1"


def _copy_tests(repo: str, ref: str, root: Path) -> list[str]:
    node_ids = []
    for path, names in SELECTION.items():
        text = subprocess.run(
            ["git", "--git-dir", repo, "show", f"{ref}:{path}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        # The GP tests import Optuna's GP internals, which need PyTorch, at module
        # level; the tests chosen do not use them.
        lines = [
            line
            for line in text.splitlines(keepends=True)
            if not line.startswith(("import optuna._gp", "from optuna._gp"))
        ]
        target = root / Path(path).name
        target.write_text("".join(lines))
        node_ids += [f"{target.name}::{name}" for name in names]
    (root / "conftest.py").write_text(textwrap.dedent(CONFTEST))
    (root / "test_treebo_multi_objective_case.py").write_text(textwrap.dedent(TEST_CASE))
    node_ids.append("test_treebo_multi_objective_case.py")
    return node_ids


def _report(junit: Path) -> tuple[int, list[tuple[str, str]]]:
    passed, failed = 0, []
    for case in ET.parse(junit).getroot().iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}::{case.get('name')}"
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is None:
            if case.find("skipped") is None:
                passed += 1
            continue
        message = (problem.get("message") or problem.text or "").strip().splitlines()
        failed.append((name, message[0] if message else ""))
    return passed, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default=DEFAULT_REPO, help="git directory of Optuna")
    parser.add_argument("--ref", default=None, help="tag or commit (default: v5.0.0 or rc1)")
    parser.add_argument("--keep", default=None, help="directory to keep the copied tests in")
    args = parser.parse_args(argv)
    ref = args.ref or _default_ref(args.repo)
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(args.keep or scratch)
        root.mkdir(parents=True, exist_ok=True)
        node_ids = _copy_tests(args.repo, ref, root)
        junit = root / "junit.xml"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--rootdir",
                str(root),
                f"--junitxml={junit}",
                *node_ids,
            ],
            cwd=root,
            check=False,
        )
        passed, failed = _report(junit)
    print(f"\nOptuna {ref}'s tests with TreeBOSampler: {passed} passed, {len(failed)} failed")
    for name, message in failed:
        print(f"  FAILED {name}: {message}")
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())

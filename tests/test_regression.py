"""Proposals of seeded runs, bit for bit: refactoring must not change what treebo proposes.

Each case below runs a short seeded optimization through the public API and
records every evaluated point's encoding and value as ``float.hex`` strings.
``tests/data/proposals.json`` holds the recorded figures; the test asserts
the current code reproduces them exactly. Tree building and the random
streams are deterministic for given numpy and scikit-learn versions, so the
file also records those versions and the test skips (saying why) under other
ones rather than failing on a library's change.

A deliberate change of behaviour regenerates the file, in the same commit,
with ``python tests/test_regression.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
import sklearn

from treebo import Binary, Categorical, Integer, Optimizer, Real, minimize

GOLDEN = Path(__file__).parent / "data" / "proposals.json"
# Small pools keep the suite fast; every stage of a proposal still runs
# (Sobol, local and jump candidates, distance variance, exploration steps).
SMALL = dict(n_candidates=2000, n_local_candidates=300, n_jump_candidates=100)


def _branin(x):
    a, b, c = 1.0, 5.1 / (4 * np.pi**2), 5 / np.pi
    return float(a * (x[1] - b * x[0] ** 2 + c * x[0] - 6) ** 2
                 + 10 * (1 - 1 / (8 * np.pi)) * np.cos(x[0]) + 10)


def _bits(x):
    w = np.linspace(-1.0, 1.0, len(x))
    return float(np.dot(w, x) + 0.3 * x[0] * x[-1])


def _mixed(x):
    offset = {"a": 0.0, "b": 0.5, "c": 1.0}[x["kind"]]
    return float(np.log10(x["rate"]) ** 2 + (x["depth"] - 4) ** 2 / 10 + offset - 0.2 * x["flag"])


CONTINUOUS = [Real(-5.0, 10.0), Real(0.0, 15.0)]
BINARY = [Binary() for _ in range(12)]
MIXED = {"rate": Real(1e-4, 1.0, log=True), "depth": Integer(1, 10),
         "kind": Categorical(["a", "b", "c"]), "flag": Binary()}


def _hex(value) -> str:
    # Reals as float.hex (every bit); integers, binaries and categories as text.
    return float(value).hex() if isinstance(value, float) else repr(value)


def _record(space, x_iters, values) -> list[list[str]]:
    return [[_hex(v) for v in (x.values() if isinstance(x, dict) else x)]
            + [float(y).hex()] + [float(v).hex() for v in space.encode([x])[0]]
            for x, y in zip(x_iters, values)]


def _minimize_case(func, space, n_calls, **kwargs):
    res = minimize(func, space, n_calls=n_calls, random_state=7, **SMALL, **kwargs)
    return _record(res.space, res.x_iters, res.func_vals)


def _default_pool_case(func, space, n_calls, **kwargs):
    res = minimize(func, space, n_calls=n_calls, random_state=7, **kwargs)
    return _record(res.space, res.x_iters, res.func_vals)


def _batch_case():
    opt = Optimizer(CONTINUOUS, random_state=7, **SMALL)
    for _ in range(4):
        points = opt.ask(3)
        for x in points:
            opt.tell(x, _branin(x))
    res = opt.get_result()
    return _record(res.space, res.x_iters, res.func_vals)


def _storage_case(tmp_path):
    path = tmp_path / "study.db"
    minimize(_mixed, MIXED, n_calls=8, random_state=7, storage=path, **SMALL)
    res = minimize(_mixed, MIXED, n_calls=14, random_state=7, storage=path, **SMALL)
    return _record(res.space, res.x_iters, res.func_vals)


CASES = {
    "continuous bwo": lambda tmp: _minimize_case(_branin, CONTINUOUS, 18),
    "continuous ert": lambda tmp: _minimize_case(_branin, CONTINUOUS, 12, surrogate="ert"),
    "continuous rf": lambda tmp: _minimize_case(_branin, CONTINUOUS, 12, surrogate="rf"),
    "continuous gp": lambda tmp: _minimize_case(_branin, CONTINUOUS, 10, surrogate="gp"),
    "binary bwo": lambda tmp: _minimize_case(_bits, BINARY, 16),
    "mixed bwo": lambda tmp: _minimize_case(_mixed, MIXED, 14),
    "mixed bwo with storage, resumed": _storage_case,
    "batch of 3, cl_min": lambda tmp: _batch_case(),
    # The default pool sizes: a pool this large is predicted in a locality
    # order, and the binary grid's 0/1 rows take the matrix-product distances.
    "continuous bwo, default pool": lambda tmp: _default_pool_case(_branin, CONTINUOUS, 9),
    "binary ert, default pool": lambda tmp: _default_pool_case(_bits, BINARY, 9,
                                                               surrogate="ert"),
}


def _versions() -> dict[str, str]:
    # Major.minor: patch releases do not change tree building or the generators.
    return {"numpy": ".".join(np.__version__.split(".")[:2]),
            "scikit-learn": ".".join(sklearn.__version__.split(".")[:2])}


@pytest.fixture(scope="module")
def golden():
    recorded = json.loads(GOLDEN.read_text())
    if recorded["versions"] != _versions():
        pytest.skip(f"proposals recorded with {recorded['versions']}, installed {_versions()}; "
                    "bit-identical proposals are only defined for the same libraries")
    return recorded["cases"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_proposals_are_bit_identical_to_the_recorded_ones(case, golden, tmp_path):
    assert CASES[case](tmp_path) == golden[case]


if __name__ == "__main__":
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        cases = {name: make(Path(tmp) / name.replace(" ", "_")) for name, make in CASES.items()
                 if not Path(tmp, name.replace(" ", "_")).mkdir()}
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps({"versions": _versions(), "cases": cases}, indent=0) + "\n")
    print(f"wrote {GOLDEN} ({len(cases)} cases)", file=sys.stderr)

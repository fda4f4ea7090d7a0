"""Every ```python block of README.md runs as a script, as written.

The blocks are found and run by ``readme_examples`` (a fresh ``__main__``
namespace, a temporary working directory, a time limit). Some blocks also
have their results checked; the figures in the checks were measured at the
seeds the blocks use.
"""

import pytest
from readme_examples import README, find_block, python_blocks, run_and_check

BLOCKS = python_blocks(README)


def _continuous(ns, workdir, out):
    # Branin's minimum is 0.397887; 30 calls at seed 0 end within 0.05 of it.
    assert ns["res"].fun - 0.397887 < 0.05
    assert len(ns["res"].x_iters) == 30


def _mixed(ns, workdir, out):
    res = ns["res"]
    assert set(res.x) == {"optimizer", "learning_rate", "layers", "dropout"}
    assert len(res.x_iters) == 25 and res.n_failed == 0


def _ask_tell(ns, workdir, out):
    assert len(ns["result"].x_iters) == 20
    assert ns["train_and_validate"](0.01, 100) == 0.0


#: A marker found in exactly one README block -> the check of that block's results.
CHECKS = {"def branin": _continuous, "def loss(p)": _mixed, "opt.ask()": _ask_tell}


def test_readme_has_the_three_examples():
    for marker in CHECKS:
        find_block(BLOCKS, marker)


@pytest.mark.parametrize("block", [b.param() for b in BLOCKS])
def test_readme_block_runs(block, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    run_and_check(block, tmp_path, CHECKS, capsys)

"""Test-suite settings and helpers shared by every test module."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

try:
    from hypothesis import settings
except ImportError:  # the property-based modules skip themselves then
    settings = None

if settings is not None:
    # Property-based tests draw the same examples on every run and keep no
    # example database: a failure found once must not make later runs of
    # unchanged code fail, and CI must see what a developer sees.
    settings.register_profile("deterministic", derandomize=True, database=None)
    settings.load_profile("deterministic")

# A run started in the background without job control (`nohup pytest &` in a
# script) inherits SIGINT ignored, and so would every child it starts; the tests
# that press Ctrl-C need it to raise KeyboardInterrupt, as it does in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _scikit_learn_config():
    """Each test starts from scikit-learn's configuration as the previous one found it.

    A real SIGINT in the Ctrl-C tests can land inside ``sklearn.config_context``
    during a surrogate's fit, between its change of the (thread-local)
    configuration and the ``try`` that undoes it; the interrupted run then leaves
    ``skip_parameter_validation=True`` behind, and a later test of parameter
    checks would see no check.
    """
    import sklearn

    before = sklearn.get_config()
    yield
    sklearn.set_config(**before)


# -- an unprivileged child, for permission faults --------------------------------------

_UNPRIVILEGED = 65534  # "nobody": a user without root's disregard of permission bits


@pytest.fixture
def unprivileged_prefix():
    """The command prefix that runs a child without root's capabilities (a skip when
    the tests run as root and cannot drop them)."""
    if os.geteuid() != 0:
        return []
    prefix = ["setpriv", f"--reuid={_UNPRIVILEGED}", f"--regid={_UNPRIVILEGED}", "--clear-groups"]
    try:
        # treebo.optimizer imports numpy, scipy and scikit-learn: the child must
        # be able to read the environment they are installed in.
        ok = (
            subprocess.run(
                [*prefix, sys.executable, "-c", "import treebo.optimizer"],
                timeout=60,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
                capture_output=True,
            ).returncode
            == 0
        )
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        pytest.skip(
            "running as root, which ignores permission bits, and setpriv cannot "
            "run treebo and its dependencies as an unprivileged user here (or the "
            "environment is not readable by that user)"
        )
    return prefix


@pytest.fixture
def user_dir():
    """An empty directory the unprivileged child owns (tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="treebo-fault-"))
    if os.geteuid() == 0:
        os.chown(path, _UNPRIVILEGED, _UNPRIVILEGED)
    yield path
    os.chmod(path, 0o700)
    shutil.rmtree(path, ignore_errors=True)

"""The ```python blocks of README.md and of the docs pages, found and run as scripts.

Shared by ``tests/test_readme.py`` and ``tests/test_docs.py``. A block runs
as a script would: in a fresh namespace with ``__name__ == "__main__"`` (so a
block's ``if __name__ == "__main__":`` guard runs, and worker processes that
re-import the script do not), in the working directory the test chooses,
under a time limit. The convention for blocks too slow for the default test
run: the block's first line is a comment starting with ``# slow`` (say why:
``# slow: starts a Dask cluster``); such blocks run with ``pytest -m slow``.
"""

from __future__ import annotations

import importlib.util
import re
import runpy
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
#: Folders under docs/ that hold no hand-written pages (build output, generated files).
SKIPPED_DOCS = ("_build", "generated", "_templates", "_ext")

#: Seconds a block may take: default-suite blocks are meant to take a few seconds each.
TIME_LIMIT = 120
SLOW_TIME_LIMIT = 900

#: Optional dependencies -> the extra that installs them (pyproject.toml). A block that
#: needs one that is not installed is skipped, naming the extra.
OPTIONAL_MODULES = {
    "matplotlib": "plot",
    "dask": "dask",
    "distributed": "dask",
    "ngboost": "ngboost",
    "stochtree": "bart",
    "nbclient": "notebooks",
    "nbformat": "notebooks",
    "pandas": "pandas",
}

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is and what it says."""

    path: Path
    line: int  # line of the opening fence, 1-based
    code: str

    @property
    def slow(self) -> bool:
        first = self.code.lstrip().split("\n", 1)[0].strip()
        return first.startswith("# slow")

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"

    def param(self):
        """A pytest parameter, marked slow when the block says so."""
        marks = [pytest.mark.slow] if self.slow else []
        return pytest.param(self, id=self.id, marks=marks)


def python_blocks(path: Path) -> list[Block]:
    """Every ```python block of a Markdown file, in order."""
    text = path.read_text()
    return [
        Block(path, text.count("\n", 0, m.start()) + 1, m.group(1)) for m in _FENCE.finditer(text)
    ]


def doc_pages() -> list[Path]:
    """The Markdown pages under docs/, build output and generated files left out."""
    return sorted(
        p
        for p in DOCS.rglob("*.md")
        if not any(part in SKIPPED_DOCS for part in p.relative_to(DOCS).parts)
    )


class BlockTimeout(Exception):
    """A block ran past its time limit."""


def run_block(block: Block, workdir: Path, time_limit: float | None = None) -> dict:
    """Run ``block`` as the script ``workdir/<name>.py`` with ``workdir`` as the working
    directory; return the namespace it leaves. Raises :class:`BlockTimeout` past the limit.
    """
    import os

    limit = time_limit or (SLOW_TIME_LIMIT if block.slow else TIME_LIMIT)
    script = workdir / f"{block.path.stem}_line{block.line}.py"
    script.write_text(block.code)

    def on_alarm(signum, frame):
        raise BlockTimeout(f"{block.id} ran longer than {limit} s")

    previous_dir = os.getcwd()
    previous_handler = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    os.chdir(workdir)
    try:
        return runpy.run_path(str(script), run_name="__main__")
    except ImportError as error:
        skip_if_extra_missing(error, block)
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        os.chdir(previous_dir)


def skip_if_extra_missing(error: BaseException | None, block: Block) -> None:
    """Skip the test if ``error``, or an error that caused it, is an optional dependency
    that is not installed; return otherwise (the caller re-raises ``error``)."""
    while error is not None:
        name = (getattr(error, "name", None) or "").partition(".")[0]
        if (
            isinstance(error, ImportError)
            and name in OPTIONAL_MODULES
            and importlib.util.find_spec(name) is None
        ):
            pytest.skip(f"{block.id} needs {name}: pip install 'treebo[{OPTIONAL_MODULES[name]}]'")
        error = error.__cause__


def run_and_check(block: Block, workdir: Path, checks: dict, capsys: object) -> None:
    """Run ``block`` as a script in ``workdir`` and apply every check whose marker it holds.

    ``checks`` maps a marker (text found in exactly one block) to a function
    ``check(namespace, workdir, printed)`` asserting that block's results.
    """
    import sys

    namespace = run_block(block, workdir)
    printed = capsys.readouterr().out
    for marker, check in checks.items():
        if marker in block.code:
            check(namespace, workdir, printed)
    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


def find_block(blocks: list[Block], marker: str) -> Block:
    """The one block containing ``marker``."""
    found = [b for b in blocks if marker in b.code]
    assert len(found) == 1, f"expected one block containing {marker!r}, found {len(found)}"
    return found[0]


def all_blocks() -> list[Block]:
    """The blocks of README.md and of every docs page, each distinct code once."""
    seen, out = set(), []
    for path in [README, *doc_pages()]:
        for block in python_blocks(path):
            if block.code not in seen:
                seen.add(block.code)
                out.append(block)
    return out


def readme_block(marker: str) -> str:
    """The code of the one block of README.md or the docs pages that contains ``marker``."""
    return find_block(all_blocks(), marker).code


def run_readme_block(marker: str, namespace: dict | None = None) -> dict:
    """Run the one block (README.md or a docs page) containing ``marker`` in the current
    working directory, in ``namespace`` if given (names the block expects), as ``__main__``;
    return the namespace. Used by the tests of the modules whose examples the pages show.
    """
    block = find_block(all_blocks(), marker)
    namespace = {} if namespace is None else namespace
    namespace.setdefault("__name__", "__main__")
    exec(compile(block.code, block.id, "exec"), namespace)  # noqa: S102 - our own docs
    return namespace

"""The README's Python examples, found by a marker and run as written (shared by the tests)."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def readme_block(marker: str) -> str:
    """The one ```python block of README.md that contains ``marker``."""
    blocks = [b for b in re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
              if marker in b]
    assert len(blocks) == 1, f"expected one README block containing {marker!r}"
    return blocks[0]


def run_readme_block(marker: str, namespace: dict | None = None) -> dict:
    """Run that block, in ``namespace`` if given (names the block expects); returns it."""
    namespace = {} if namespace is None else namespace
    exec(compile(readme_block(marker), str(README), "exec"), namespace)  # noqa: S102 - our README
    return namespace

"""Load a script of ``benchmarks/`` (not an installed package) as a module, for its tests."""

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def load_script(relative: str) -> ModuleType:
    """The module of ``benchmarks/<relative>``: a script, or a folder's ``__init__.py``."""
    path = BENCHMARKS / relative
    package = path.name == "__init__.py"
    name = "treebo_benchmarks_" + (path.parent.name if package else path.stem)
    spec = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[str(path.parent)] if package else None
    )
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module

"""benchmarks/results/: one folder per experiment, each described by its manifest.json."""

import fnmatch
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DATA = ("*.json", "*.jsonl", "*.jsonl.gz")
#: The working-tree budget of benchmarks/ (scripts, configs and records).
MAX_MIB = 20


def _experiments() -> list[Path]:
    """Every folder that holds result files (other than its manifest)."""
    folders = {
        p.parent for pattern in DATA for p in RESULTS.rglob(pattern) if p.name != "manifest.json"
    }
    return sorted(folders)


def _data_files(folder: Path) -> list[str]:
    return sorted(
        p.name for pattern in DATA for p in folder.glob(pattern) if p.name != "manifest.json"
    )


def test_the_results_are_laid_out_by_experiment():
    folders = _experiments()
    assert len(folders) >= 10
    assert not any(p.is_file() for pattern in DATA for p in RESULTS.glob(pattern)), (
        "result files go in benchmarks/results/<experiment>/, not in benchmarks/results/"
    )


@pytest.mark.parametrize("folder", _experiments(), ids=lambda p: str(p.relative_to(RESULTS)))
def test_every_experiment_has_a_manifest_that_names_its_files_commands_and_pages(folder):
    manifest = json.loads((folder / "manifest.json").read_text())
    assert isinstance(manifest["measures"], str) and manifest["measures"]
    for page in manifest["docs"] + manifest.get("read_by", []):
        assert (ROOT / page).is_file(), page
    files = _data_files(folder)
    claimed = []
    for run in manifest["runs"]:
        assert run["command"] and all(isinstance(c, str) and c for c in run["command"])
        assert re.fullmatch(r"[0-9a-f]{7,40}", run["commit"]), run["commit"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", run["date"]), run["date"]
        for pattern in run["files"]:
            matched = fnmatch.filter(files, pattern)
            assert matched, f"{pattern} matches no file of {folder.name}"
            claimed += matched
    assert sorted(claimed) == files, "every result file is named by exactly one run"


def test_every_config_writes_into_an_experiment_folder():
    for path in (ROOT / "benchmarks" / "configs").glob("*.json"):
        out = json.loads(path.read_text())["out"]
        assert out.startswith("benchmarks/results/") and out.count("/") >= 3, (path.name, out)


def test_benchmarks_stays_within_its_size_budget():
    size = sum(
        p.stat().st_size
        for p in (ROOT / "benchmarks").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    assert size < MAX_MIB * 2**20, (
        f"benchmarks/ holds {size / 2**20:.1f} MiB; compress record files with gzip "
        f"(<problem>.jsonl.gz) or move superseded records out (budget {MAX_MIB} MiB)"
    )

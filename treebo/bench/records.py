"""The JSON record of a benchmark run, and the JSON-lines files that hold them.

One run is one record, appended as one line to ``<out>/<problem>.jsonl``
(:func:`append_record`), which :func:`load_results` reads back, together with
gzip-compressed ``<problem>.jsonl.gz`` files beside it (how the records
committed under ``benchmarks/results/`` are stored). The layout is
:func:`build_record`'s; ``python -m benchmarks.peers`` writes the same layout
for other libraries' optimizers, and the committed records are read with it,
so fields are only ever added.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import platform
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .presets import N_INITIAL
from .spec import RunSpec

if TYPE_CHECKING:
    from .. import OptimizeResult
    from ..problems import Problem

__all__ = [
    "SCHEMA_VERSION",
    "build_record",
    "trajectory",
    "timings",
    "to_jsonable",
    "versions",
    "load_results",
    "completed_runs",
    "append_record",
]

#: Version of the record layout written by :func:`build_record`.
SCHEMA_VERSION = 1


def build_record(
    spec: RunSpec,
    problem: Problem,
    settings: dict,
    result: OptimizeResult,
    *,
    eval_time: Sequence[float | None],
    started: str,
    wall_time: float,
) -> dict:
    """The record of a finished run.

    Parameters
    ----------
    spec : RunSpec
    problem : Problem
        The run's problem instance.
    settings : dict
        The :func:`~treebo.minimize` arguments the run used
        (:func:`~treebo.bench.minimize_settings`).
    result : OptimizeResult
        What :func:`~treebo.minimize` returned.
    eval_time : sequence of float or None
        Seconds per evaluation, in evaluation order; None where unknown.
    started : str
        When the run started, as an ISO 8601 timestamp.
    wall_time : float
        Seconds the run took.

    Returns
    -------
    dict
        The record (JSON-serializable): ``problem``, ``problem_params`` (the
        requested parameters), ``instance_params`` (the instance's),
        ``surrogate``, ``seed``, ``preset``, ``overrides``, ``n_calls``,
        ``n_evaluated``, ``n_initial``, ``optimal_value`` (None when
        unknown), ``regret_floor`` (the problem's
        :attr:`~treebo.problems.Problem.regret_floor`: the smallest regret its
        protocol reports, e.g. 1e-8 for bbob; None for most), per
        evaluation ``x`` (the whole field None when the problem's
        :attr:`~treebo.problems.Problem.record_points` is False), ``values``
        (None for a failed evaluation),
        ``best_so_far``, ``regret`` (best-so-far minus the optimal value, the
        paper's "best instantaneous regret"; None when the optimum is
        unknown), ``fit_time``, ``acq_time`` and ``eval_time`` (seconds; 0
        fit and acquisition time for the initial design), plus
        ``errors``, ``settings`` (the :func:`~treebo.minimize` arguments,
        ``x0`` named rather than listed), ``versions``, ``started``,
        ``wall_time``, ``message``, ``key`` and ``schema``.
    """
    values, best_so_far, regret = trajectory(result.func_vals, problem.optimal_value)
    recorded = {k: v for k, v in settings.items() if k != "x0"}
    # Only the paper preset passes x0, and its points follow from the seed.
    recorded["x0"] = "paper_initial_design" if "x0" in settings else None
    return to_jsonable(
        {
            "schema": SCHEMA_VERSION,
            "key": spec.key(),
            "problem": spec.problem,
            "problem_params": dict(spec.problem_params),
            "instance_params": problem.params,
            "surrogate": spec.surrogate,
            "seed": int(spec.seed),
            "preset": spec.preset,
            "overrides": dict(spec.overrides),
            "n_calls": int(spec.n_calls),
            "n_evaluated": len(values),
            "n_initial": int(settings.get("n_initial_points", N_INITIAL)),
            "optimal_value": problem.optimal_value,
            "regret_floor": problem.regret_floor,
            "x": result.x_iters if problem.record_points else None,
            "values": values,
            "best_so_far": best_so_far,
            "regret": regret,
            "fit_time": timings(result.fit_time),
            "acq_time": timings(result.acq_time),
            "eval_time": timings(eval_time),
            "errors": [e for e in result.errors if e],
            "settings": recorded,
            "versions": versions(),
            "started": started,
            "wall_time": wall_time,
            "message": result.message,
        }
    )


def timings(seconds: Sequence[float | None]) -> list[float | None]:
    """Durations as a record stores them: seconds to the microsecond.

    Finer digits are timer noise, and a record's timings, stored to the last
    bit, would be most of its size (a 10-D bbob run's three timing arrays
    compressed to twice its values).

    Parameters
    ----------
    seconds : sequence of float or None
        None (no time measured) is kept.

    Returns
    -------
    list of float or None
    """
    return [None if s is None else round(float(s), 6) for s in seconds]


def trajectory(
    values: Sequence[float], optimal_value: float | None
) -> tuple[list, list, list | None]:
    """A run's values, best-so-far and regret as a record stores them.

    Parameters
    ----------
    values : sequence of float
        Objective values in evaluation order; NaN or inf for failed evaluations.
    optimal_value : float or None
        The problem's optimum, when known.

    Returns
    -------
    values : list of float or None
        None for a failed evaluation.
    best_so_far : list of float or None
        None until the first successful evaluation.
    regret : list of float or None, or None
        ``best_so_far - optimal_value`` per evaluation; None when the optimum
        is unknown.
    """
    clean = [None if not math.isfinite(v) else float(v) for v in values]
    best, best_so_far = math.inf, []
    for v in clean:
        if v is not None:
            best = min(best, v)
        best_so_far.append(best if math.isfinite(best) else None)
    regret = None
    if optimal_value is not None:
        regret = [None if b is None else b - optimal_value for b in best_so_far]
    return clean, best_so_far, regret


def to_jsonable(value: Any) -> Any:
    """``value`` with numpy scalars as Python numbers, tuples as lists, non-finite floats as None.

    Anything else that JSON cannot hold becomes its ``repr``.

    Parameters
    ----------
    value : any

    Returns
    -------
    any
        Dicts (with string keys), lists, strings, numbers, booleans and None only.
    """
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return repr(value)


_VERSIONS: dict[str, str] = {}


def versions() -> dict[str, str]:
    """Versions of Python, treebo and the libraries that decide a run's numbers.

    Returns
    -------
    dict of str to str
        ``python``, ``treebo``, ``numpy``, ``scipy``, ``sklearn``, ``qmcpy``,
        ``platform`` and ``machine``, plus ``treebo_commit`` when treebo runs
        from a git checkout.
    """
    if not _VERSIONS:
        import qmcpy
        import scipy
        import sklearn

        import treebo

        _VERSIONS.update(
            python=platform.python_version(),
            treebo=treebo.__version__,
            numpy=np.__version__,
            scipy=scipy.__version__,
            sklearn=sklearn.__version__,
            qmcpy=qmcpy.__version__,
            platform=platform.platform(),
            machine=platform.machine(),
        )
        commit = _git_commit()
        if commit:
            _VERSIONS["treebo_commit"] = commit
    return dict(_VERSIONS)


def _git_commit() -> str | None:
    import subprocess

    root = Path(__file__).resolve().parents[2]  # treebo/bench/records.py -> the checkout
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def load_results(path: str | os.PathLike) -> list[dict]:
    """Read records from a ``.jsonl`` or ``.jsonl.gz`` file, or from every one of a directory.

    Lines that are not valid JSON, such as a truncated last line (a run
    killed while writing), are skipped. A ``.jsonl.gz`` file is read as gzip
    (several concatenated gzip members included), so a directory may hold a
    problem's compressed records and the plain ``.jsonl`` file that new runs
    append to; both are read, the compressed one first.

    Parameters
    ----------
    path : str or path-like
        A ``.jsonl`` or ``.jsonl.gz`` file, or a directory whose ``*.jsonl``
        and ``*.jsonl.gz`` files (not those of subdirectories) are read in
        name order.

    Returns
    -------
    list of dict
        The records, in file and line order; blank lines and lines that are
        not valid JSON are skipped.

    Raises
    ------
    ValueError
        If ``path`` does not exist.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted([*path.glob("*.jsonl"), *path.glob("*.jsonl.gz")], key=_file_order)
    elif path.exists():
        files = [path]
    else:
        raise ValueError(f"results path {str(path)!r} does not exist")
    records = []
    for file in files:
        opener = gzip.open if file.name.endswith(".gz") else open
        with opener(file, "rt") as handle:
            for line in handle:
                line = line.strip()
                if not line:
                    continue
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return records


def _file_order(file: Path) -> tuple[str, bool]:
    # A problem's compressed (committed) records before the plain file appended after them.
    return file.name.removesuffix(".gz"), not file.name.endswith(".gz")


def completed_runs(records: Iterable[dict]) -> dict[str, int]:
    """Run key -> the most evaluations recorded for it.

    Parameters
    ----------
    records : iterable of dict
        As read by :func:`load_results`; records without a ``key`` are ignored.

    Returns
    -------
    dict of str to int
        :meth:`RunSpec.key` -> the most evaluations any record of that run
        holds (its ``n_evaluated``, or ``n_calls`` when that is missing).
    """
    done: dict[str, int] = {}
    for record in records:
        key = record.get("key")
        if key is not None:
            done[key] = max(done.get(key, 0), int(record.get("n_evaluated", record["n_calls"])))
    return done


def append_record(out: Path, record: dict) -> None:
    """Append ``record`` as one line to ``<out>/<problem>.jsonl``, safe beside other writers.

    The line goes out in one ``os.write`` on a descriptor opened with
    ``O_APPEND`` (the kernel puts each write at the end of the file as it is
    then), so records appended by several processes at once (``treebo bench``
    and ``python -m benchmarks.peers``, say) never interleave. A buffered file object
    would split a long line into several writes, which could.

    Parameters
    ----------
    out : Path
        Results directory, created if missing.
    record : dict
        A JSON-serializable record with a ``problem`` field.
    """
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{record['problem']}.jsonl"
    data = (json.dumps(record, sort_keys=True, allow_nan=False) + "\n").encode()
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        # A writer killed mid-line leaves no newline; start on a fresh line so only that
        # half-written record is lost (two writers may both add one: a blank line, skipped).
        size = os.fstat(fd).st_size
        if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)

"""A run's JSON record, and reading and appending JSON-lines files."""

import json

import numpy as np
import pytest

from treebo.bench import RunSpec, load_results, run_one
from treebo.problems import get_problem

from .helpers import FAST


def test_record_contents():
    record = run_one(RunSpec("branin", "bwo", 0, 8, overrides=FAST))
    json.dumps(record, allow_nan=False)  # strict JSON
    n = 8
    for field in ("x", "values", "best_so_far", "regret", "fit_time", "acq_time", "eval_time"):
        assert len(record[field]) == n, field
    branin = get_problem("branin")
    assert record["values"] == pytest.approx([branin(x) for x in record["x"]], rel=1e-12)
    assert record["best_so_far"] == list(np.minimum.accumulate(record["values"]))
    assert record["regret"] == pytest.approx(
        [b - branin.optimal_value for b in record["best_so_far"]]
    )
    assert record["fit_time"][:5] == [0.0] * 5 and all(t > 0 for t in record["fit_time"][5:])
    assert record["optimal_value"] == branin.optimal_value
    assert record["settings"]["random_state"] == 0 and record["settings"]["n_candidates"] == 256
    assert {"python", "treebo", "numpy", "sklearn", "qmcpy"} <= set(record["versions"])
    assert record["key"] == RunSpec("branin", "bwo", 0, 99, overrides=FAST).key()


_WRITER = """
import sys
from pathlib import Path
from treebo.bench import append_record
out, writer, n = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for i in range(n):
    append_record(out, {"problem": "p", "writer": writer, "i": i, "pad": str(writer) * 100_000})
"""


def test_concurrentappend_records_never_interleave(tmp_path):
    # Two processes (treebo bench and benchmarks/peers/, say) append long records to one
    # file at once: every line must be one whole record. A buffered write of a 100 kB line
    # goes out in several write() calls, which interleave.
    import subprocess
    import sys

    (tmp_path / "p.jsonl").write_text('{"key": "trunc')  # a killed writer's half line
    n = 60
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), str(w), str(n)])
        for w in (1, 2)
    ]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    lines = (tmp_path / "p.jsonl").read_text().splitlines()
    assert lines[0] == '{"key": "trunc'
    records = [json.loads(line) for line in lines[1:] if line]
    assert sorted((r["writer"], r["i"]) for r in records) == [
        (w, i) for w in (1, 2) for i in range(n)
    ]
    assert all(r["pad"] == str(r["writer"]) * 100_000 for r in records)
    assert len(load_results(tmp_path)) == 2 * n


def test_compressed_records_are_read_beside_the_plain_file_new_runs_append_to(tmp_path):
    import gzip

    from treebo.bench import append_record, completed_runs

    def line(record):
        return (json.dumps(record) + "\n").encode()

    committed = [
        {"problem": "p", "key": "k0", "n_calls": 9, "i": 0},
        {"problem": "p", "key": "k1", "n_calls": 9, "i": 1},
    ]
    # Two gzip members, as `gzip -c new.jsonl >> p.jsonl.gz` makes, and a truncated line.
    with open(tmp_path / "p.jsonl.gz", "wb") as handle:
        handle.write(gzip.compress(line(committed[0])))
        handle.write(gzip.compress(line(committed[1]) + b'{"key": "trunc'))
    (tmp_path / "q.jsonl.gz").write_bytes(gzip.compress(line({"problem": "q", "i": 3})))
    (tmp_path / "notes.json.gz").write_bytes(gzip.compress(line({"problem": "x"})))
    append_record(tmp_path, {"problem": "p", "key": "k2", "n_calls": 9, "i": 2})

    records = load_results(tmp_path)
    # p's compressed records first, then the file appended to, then q's.
    assert [r["i"] for r in records] == [0, 1, 2, 3]
    assert load_results(tmp_path / "p.jsonl.gz") == committed
    assert completed_runs(records) == {"k0": 9, "k1": 9, "k2": 9}


def test_a_grid_resumes_past_runs_recorded_in_a_compressed_file(tmp_path):
    import gzip

    from treebo.bench import run_grid

    out = tmp_path / "results"
    run_grid(["branin"], ["rf"], [0], out, 6, overrides=FAST, n_jobs=1, progress=False)
    plain = out / "branin.jsonl"
    (out / "branin.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    again = run_grid(["branin"], ["rf"], [0, 1], out, 6, overrides=FAST, n_jobs=1, progress=False)
    assert [r["seed"] for r in again] == [1]
    assert [r["seed"] for r in load_results(out)] == [0, 1]


def test_a_missing_results_path_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_results(tmp_path / "missing")


def test_a_record_states_the_initial_points_the_run_used(tmp_path):
    from treebo.bench import RunSpec, regret_curves, run_one, summary_table

    record = run_one(RunSpec("branin", "rf", 0, n_calls=9, overrides={"n_initial_points": 7}))
    assert record["n_initial"] == 7 and record["settings"]["n_initial_points"] == 7
    curves = regret_curves([record])[0]
    assert curves.n_initial == 7 and curves.curves.shape == (1, 3)
    assert summary_table([record])["branin"]["n_calls"]["rf"] == 9

"""Peak memory and time of the first asks on very wide spaces.

Runs ``Optimizer.ask``/``tell`` on a sphere of ``D`` real dimensions for
``--asks`` evaluations (the first ``n_initial_points=5`` from the initial
design, the rest model-based), each width in a fresh child process, and prints
the child's peak resident set size (``ru_maxrss``: everything the process
ever held at once, interpreter and libraries included) and the wall seconds of
its asks and tells. With ``--repeats``, every width runs that many times, one
after the other, and the least of its seconds (the run least disturbed by
other work on the machine) and the largest of its peaks are shown. The
baseline is the first width of ``--dims`` (D = 100 by default), measured in
the same run: the other widths are given as ratios to its peak and its
seconds, and in absolute MiB and seconds.

    python benchmarks/wide_space_memory.py --asks 6 --dims 100 1000 10000 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def child(dim: int, asks: int, seed: int) -> dict:
    """Run ``asks`` evaluations on a ``dim``-D sphere; the peak RSS and seconds."""
    import numpy as np

    from treebo import Optimizer, Real

    opt = Optimizer([Real(-1.0, 1.0)] * dim, random_state=seed)
    start = time.perf_counter()
    for _ in range(asks):
        x = opt.ask()
        opt.tell(x, float(np.sum(np.square(x))))
    seconds = time.perf_counter() - start
    return {
        "dim": dim,
        "asks": asks,
        "model_based": sum(t.origin == "model" for t in opt.trials),
        # ru_maxrss is in KiB on Linux.
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "seconds": seconds,
    }


def measure(dim: int, asks: int, seed: int) -> dict:
    """:func:`child` in a fresh process, so that no width inherits another's peak."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(dim), "--asks", str(asks), "--seed", str(seed)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"dim": dim, "asks": asks, "error": tail[0]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--asks", type=int, default=6, help="evaluations per width")
    parser.add_argument(
        "--dims", type=int, nargs="+", default=[100, 1000, 10000], help="the first is the baseline"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=1, help="runs per width")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.asks, args.seed)))
        return

    rows = []
    for dim in args.dims:  # one after the other: the widest needs the machine's memory
        runs = []
        for _ in range(args.repeats):
            runs.append(measure(dim, args.asks, args.seed))
            print(json.dumps(runs[-1]), file=sys.stderr, flush=True)
        done = [run for run in runs if "error" not in run]
        rows.append(
            {
                **done[0],
                "peak_mib": max(run["peak_mib"] for run in done),
                "seconds": min(run["seconds"] for run in done),
            }
            if done
            else runs[0]
        )
    base = rows[0]
    print(
        f"{args.asks} asks and tells per width, {args.repeats} run(s) each; "
        f"baseline D = {base['dim']}"
    )
    print(f"{'D':>7} {'model':>5} {'peak MiB':>9} {'x base':>7} {'seconds':>8} {'x base':>7}")
    for row in rows:
        if "error" in row:
            print(f"{row['dim']:>7}  failed: {row['error']}")
            continue
        peak_ratio = row["peak_mib"] / base["peak_mib"] if "error" not in base else float("nan")
        time_ratio = row["seconds"] / base["seconds"] if "error" not in base else float("nan")
        print(
            f"{row['dim']:>7} {row['model_based']:>5} {row['peak_mib']:>9.0f} {peak_ratio:>7.2f} "
            f"{row['seconds']:>8.2f} {time_ratio:>7.2f}"
        )


if __name__ == "__main__":
    main()

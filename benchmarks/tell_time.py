"""Seconds to tell points one at a time: does ``tell()`` cost the same at any history length?

Tells ``--points`` points of a 6-D space to a fresh ``Optimizer`` one
``tell`` at a time (each returns the result so far, as users get it) and
prints the total, and the mean seconds per tell over the first and the last
``--window`` tells. Their ratio is the growth: 1.0 means constant time per
tell; a tell that rebuilt the whole result from every trial would grow with
the history.

    python benchmarks/tell_time.py                 # 2,000 points, 3 repeats
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from treebo import Optimizer, Real


def tell_all(X: np.ndarray, y: np.ndarray) -> list[float]:
    opt = Optimizer([Real(0.0, 1.0) for _ in range(X.shape[1])], random_state=0)
    seconds = []
    for x, value in zip(X, y):
        start = time.perf_counter()
        opt.tell(list(x), float(value))
        seconds.append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=2000)
    parser.add_argument("--window", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.random((args.points, 6))
    y = np.sin(3 * X).sum(axis=1)
    totals, growths = [], []
    for _ in range(args.repeats):
        seconds = tell_all(X, y)
        first = statistics.fmean(seconds[: args.window])
        last = statistics.fmean(seconds[-args.window :])
        totals.append(sum(seconds))
        growths.append(last / first)
        print(
            f"{args.points} tells: {sum(seconds):.3f} s; per tell {first * 1e6:.0f} us over "
            f"the first {args.window}, {last * 1e6:.0f} us over the last (growth "
            f"{last / first:.2f})",
            flush=True,
        )
    print(
        f"median of {args.repeats}: {statistics.median(totals):.3f} s, growth "
        f"{statistics.median(growths):.2f}"
    )


if __name__ == "__main__":
    main()

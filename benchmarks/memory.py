"""Resident memory over a long run: does the optimizer's memory stay flat?

Runs ``Optimizer.ask``/``tell`` on a 20-D sphere for ``--calls`` evaluations
and prints the resident set size (RSS, MiB, from ``/proc/self/statm``) every
``--every`` calls, then the growth from the first model-based call to the
last. The history itself is small (one 20-float row per trial); growth
beyond a few MiB means something keeps per-iteration arrays alive (a trial
that held a view into its ask's 55,000-row candidate pool would pin the whole
pool: +8.4 MiB a trial in 20-D, ``results/memory/memory_view_into_pool.json``).

    python benchmarks/memory.py --calls 1000 --out benchmarks/results/memory/memory.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import time

import numpy as np

from treebo import Optimizer, Real


def rss_mib() -> float:
    with open("/proc/self/statm") as handle:
        resident_pages = int(handle.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--every", type=int, default=50)
    parser.add_argument("--surrogate", default="bwo")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="write the figures to this JSON file")
    args = parser.parse_args()

    opt = Optimizer([Real(-5.0, 5.0)] * args.dim, args.surrogate, random_state=args.seed)
    samples, start = [], time.perf_counter()
    for call in range(1, args.calls + 1):
        x = opt.ask()
        opt.tell(x, float(np.sum(np.square(x))))
        if call % args.every == 0 or call == args.calls:
            gc.collect()
            samples.append(
                {"calls": call, "rss_mib": rss_mib(), "seconds": time.perf_counter() - start}
            )
            print(
                f"calls {call:>5}  RSS {samples[-1]['rss_mib']:8.1f} MiB  "
                f"{samples[-1]['seconds']:8.1f} s",
                flush=True,
            )
    growth = samples[-1]["rss_mib"] - samples[0]["rss_mib"]
    print(f"growth from call {samples[0]['calls']} to {samples[-1]['calls']}: {growth:.1f} MiB")
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(
                {
                    "dim": args.dim,
                    "surrogate": args.surrogate,
                    "seed": args.seed,
                    "samples": samples,
                    "growth_mib": growth,
                },
                handle,
                indent=1,
            )


if __name__ == "__main__":
    main()

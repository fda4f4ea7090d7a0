"""Wall-clock speed-up of parallel evaluation, and what the lies cost in regret.

Part 1 (``speedup``): 64 evaluations of an objective that takes 0.5 s
(Hartmann6 behind a ``time.sleep(0.5)``), BwO with default settings, with
1, 2 and 4 workers: worker processes (``executor=`` a loky process pool, the
kind ``n_jobs=k`` uses, started and warmed up before the clock starts) and a
Dask ``LocalCluster`` (one single-threaded worker process per worker,
likewise started beforehand). The configurations take turns seed by seed.
The baseline, measured in the same run, is the sequential loop
(``minimize(..., n_jobs=1)``: evaluations in the calling process). Reported
per configuration: median wall-clock over the seeds, speed-up over the
sequential run and over the same backend with one worker (medians over the
seeds of the ratios within a round), median final regret, the share of seeds
where it is no worse than the sequential run's, the median seconds per
proposal and the median load average.

Part 2 (``regret``): the regret cost of the lies alone, over more seeds than
part 1 affords. Asynchronous runs are simulated without sleeping: k points
are always pending and the oldest is told first (every evaluation taking the
same time), which is the pattern of part 1. With k = 1 this is exactly the
sequential run. Reported: median final regret over the seeds per k and the
share of seeds where it is no worse than k = 1.

Part 3 (``batch``): the cost of a constant-liar batch. ``ask(n_points=q)``
draws the candidates once, then refits the surrogate q times (told data plus
one more lie each time, same seed) and scores the shared candidates. Each
repeat asks an optimizer of its own, seeded with the repeat's index
(``random_state``) and told the same 50 random points. Reported: median
seconds per proposed point for q = 1, 4 and 8, against q single asks.

    python benchmarks/parallel_speedup.py                       # all parts
    python benchmarks/parallel_speedup.py --part speedup --seeds 3 --workers 1 2
    python benchmarks/parallel_speedup.py --part batch

Results are printed and written as JSON to
``benchmarks/results/parallel_speedup/parallel_speedup.json``.
The load average of the machine at the start and the end is printed with them:
on a shared machine the driver's proposals (0.28 s for BwO at N = 50, D = 6 on
a quiet machine, see the README) slow down and become the bottleneck: with k
workers the loop keeps up only while a proposal takes less than 0.5 s / (k - 1).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import time
from collections import deque
from pathlib import Path

import numpy as np

from treebo import Optimizer, minimize
from treebo.parallel import warm_up
from treebo.problems import get_problem

RESULTS = Path(__file__).resolve().parent / "results" / "parallel_speedup" / "parallel_speedup.json"


class SlowObjective:
    """A benchmark problem that takes ``delay`` seconds per evaluation."""

    def __init__(self, name: str, delay: float):
        self.problem = get_problem(name)
        self.delay = delay

    def __call__(self, x):
        time.sleep(self.delay)
        return self.problem(x)


def _import_treebo() -> int:
    importlib.import_module("treebo.parallel")
    return os.getpid()


def _run(objective: SlowObjective, n_calls: int, seed: int, **kwargs) -> dict:
    start = time.perf_counter()
    res = minimize(objective, objective.problem.space, n_calls=n_calls, random_state=seed, **kwargs)
    wall = time.perf_counter() - start
    model = [t for t in range(len(res.fit_time)) if res.fit_time[t] > 0]
    return {
        "seed": seed,
        "wall": wall,
        "regret": objective.problem.regret(res.fun),
        "n_told": len(res.x_iters),
        "n_failed": res.n_failed,
        "propose_s": float(np.median(res.fit_time[model] + res.acq_time[model])),
    }


def speedup(args: argparse.Namespace) -> list[dict]:
    objective = SlowObjective(args.problem, args.delay)
    # Every pool and cluster is started (and warmed up) before any clock, and
    # the configurations take turns seed by seed, so that the load of a
    # shared machine, which drifts over minutes, weighs on all of them alike.
    configs: list[tuple[str, int, dict]] = [("sequential", 1, {})]
    closers = []
    if "processes" in args.backends:
        from joblib.externals.loky import ProcessPoolExecutor

        for k in args.workers:
            pool = ProcessPoolExecutor(max_workers=k)
            closers.append(pool.shutdown)
            print(
                f"  process pool of {k}: started and warmed up in "
                f"{warm_up(pool, k, seconds=0.5):.1f} s",
                flush=True,
            )
            configs.append(("processes", k, {"executor": pool, "n_jobs": k}))
    if "dask" in args.backends:
        from distributed import Client, LocalCluster

        for k in args.workers:
            start = time.perf_counter()
            cluster = LocalCluster(
                n_workers=k, threads_per_worker=1, processes=True, dashboard_address=None
            )
            client = Client(cluster)
            client.run(_import_treebo)  # keep the workers' imports off the clock
            closers += [cluster.close, client.close]
            print(
                f"  LocalCluster of {k}: started in {time.perf_counter() - start:.1f} s", flush=True
            )
            configs.append(("dask", k, {"executor": client}))
    runs: dict[tuple[str, int], list[dict]] = {(b, k): [] for b, k, _ in configs}
    try:
        for seed in range(args.seeds):
            for backend, k, kwargs in configs:
                run = _run(objective, args.n_calls, seed, **kwargs)
                run["load"] = os.getloadavg()[0]
                runs[(backend, k)].append(run)
                print(
                    f"  seed {seed} {backend:<10} {k} worker(s): {run['wall']:6.1f} s, "
                    f"regret {run['regret']:.3g}, proposal {run['propose_s']:.2f} s, "
                    f"load {run['load']:.1f}",
                    flush=True,
                )
    finally:
        for close in reversed(closers):
            close()
    return [{"backend": b, "workers": k, "runs": runs[(b, k)]} for b, k, _ in configs]


def _summary(rows: list[dict]) -> list[dict]:
    """Speed-ups are medians over seeds of ratios within one round (paired)."""
    base = {r["seed"]: r for r in rows[0]["runs"]}
    one = {
        row["backend"]: {r["seed"]: r for r in row["runs"]} for row in rows if row["workers"] == 1
    }
    table = []
    for row in rows:
        runs = row["runs"]
        regrets = [r["regret"] for r in runs]
        single = one.get(row["backend"])
        table.append(
            {
                "backend": row["backend"],
                "workers": row["workers"],
                "wall_s": float(np.median([r["wall"] for r in runs])),
                "speedup_vs_sequential": float(
                    np.median([base[r["seed"]]["wall"] / r["wall"] for r in runs])
                ),
                "speedup_vs_1_worker": float(
                    np.median([single[r["seed"]]["wall"] / r["wall"] for r in runs])
                )
                if single
                else math.nan,
                "median_regret": float(np.median(regrets)),
                "no_worse_than_sequential": float(
                    np.mean([r["regret"] <= base[r["seed"]]["regret"] for r in runs])
                ),
                "median_proposal_s": float(np.median([r["propose_s"] for r in runs])),
                "median_load": float(np.median([r["load"] for r in runs])),
            }
        )
    return table


def simulated_regret(name: str, k: int, seed: int, n_calls: int, strategy: str) -> float:
    problem = get_problem(name)
    opt = Optimizer(problem.space, random_state=seed)
    pending: deque = deque()
    for _ in range(n_calls):
        if len(pending) == k:
            x = pending.popleft()
            opt.tell(x, problem(x))
        pending.append(opt.ask(strategy=strategy))
    while pending:
        x = pending.popleft()
        opt.tell(x, problem(x))
    return problem.regret(opt.get_result().fun)


def regret(args: argparse.Namespace) -> list[dict]:
    # With k = 1 nothing is ever pending, so the strategies share that run.
    sequential = [
        simulated_regret(args.problem, 1, s, args.n_calls, "cl_min")
        for s in range(args.regret_seeds)
    ]
    print(f"  k=1 (sequential): median regret {np.median(sequential):.3g}", flush=True)
    rows = [{"strategy": "-", "k": 1, "regrets": sequential}]
    for strategy in args.strategies:
        for k in [k for k in args.workers if k > 1]:
            values = [
                simulated_regret(args.problem, k, s, args.n_calls, strategy)
                for s in range(args.regret_seeds)
            ]
            rows.append({"strategy": strategy, "k": k, "regrets": values})
            print(f"  {strategy} k={k}: median regret {np.median(values):.3g}", flush=True)
    for r in rows:
        r["median_regret"] = float(np.median(r["regrets"]))
        r["no_worse_than_k1"] = float(np.mean(np.array(r["regrets"]) <= np.array(sequential)))
    return rows


def told_optimizers(
    problem_name: str, surrogate: str, repeats: int, n_told: int = 50, **settings
) -> list[Optimizer]:
    """One optimizer per repeat, seeded with its index, each told the same random points.

    Parameters
    ----------
    problem_name : str
        A registered problem.
    surrogate : str
        The optimizers' surrogate.
    repeats : int
        How many optimizers; repeat ``r`` has ``random_state=r``.
    n_told : int, default=50
        Points drawn with ``Space.sample(n_told, random_state=1)`` and told
        with their values.
    **settings
        Further :class:`~treebo.Optimizer` arguments.

    Returns
    -------
    list of Optimizer
    """
    problem = get_problem(problem_name)
    points = problem.space.sample(n_told, random_state=1)
    values = [problem(x) for x in points]
    optimizers = []
    for rep in range(repeats):
        opt = Optimizer(problem.space, surrogate, n_initial_points=0, random_state=rep, **settings)
        for x, y in zip(points, values):
            opt.tell(x, y)
        optimizers.append(opt)
    return optimizers


def batch_cost(args: argparse.Namespace) -> list[dict]:
    out = []
    for surrogate in ("bwo", "gp"):
        for q in (1, 4, 8):
            times, fits = [], []
            for opt in told_optimizers(args.problem, surrogate, args.repeats):
                start = time.perf_counter()
                opt.ask(n_points=q)
                times.append(time.perf_counter() - start)
                fits.append(sum(t.fit_time for t in opt.trials[-q:]))
            out.append(
                {
                    "surrogate": surrogate,
                    "q": q,
                    "seconds": float(np.median(times)),
                    "per_point": float(np.median(times)) / q,
                    "fit_share": float(np.median(fits) / np.median(times)),
                }
            )
            print(
                f"  {surrogate:<4} q={q}: {np.median(times):6.2f} s per batch, "
                f"{np.median(times) / q:5.2f} s per point, fits {out[-1]['fit_share']:.0%}",
                flush=True,
            )
    for row in out:
        single = next(r for r in out if r["surrogate"] == row["surrogate"] and r["q"] == 1)
        row["vs_q_single_asks"] = row["seconds"] / (row["q"] * single["seconds"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part",
        nargs="+",
        choices=["speedup", "regret", "batch"],
        default=["speedup", "regret", "batch"],
    )
    parser.add_argument("--problem", default="hartmann6")
    parser.add_argument("--n-calls", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument(
        "--backends", nargs="+", default=["processes", "dask"], choices=["processes", "dask"]
    )
    parser.add_argument("--regret-seeds", type=int, default=20)
    parser.add_argument("--strategies", nargs="+", default=["cl_min"])
    parser.add_argument("--repeats", type=int, default=3, help="repetitions in the batch part")
    args = parser.parse_args()
    load_start = os.getloadavg()
    print(
        f"{os.cpu_count()} CPUs, load average {load_start[0]:.1f} (1 min), "
        f"{load_start[1]:.1f} (5 min)"
    )
    report: dict = {"args": vars(args), "cpus": os.cpu_count(), "load_start": load_start}
    if "speedup" in args.part:
        print(
            f"speed-up: {args.n_calls} evaluations of {args.problem} + {args.delay} s, "
            f"{args.seeds} seeds"
        )
        rows = speedup(args)
        table = _summary(rows)
        report.update(speedup_runs=rows, speedup=table)
        print(
            "\n| backend | workers | wall-clock s | speed-up vs sequential | vs 1 worker "
            "| median regret | no worse than sequential | proposal s | load |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in table:
            print(
                f"| {r['backend']} | {r['workers']} | {r['wall_s']:.1f} | "
                f"{r['speedup_vs_sequential']:.2f} | {r['speedup_vs_1_worker']:.2f} | "
                f"{r['median_regret']:.3g} | {r['no_worse_than_sequential']:.0%} | "
                f"{r['median_proposal_s']:.2f} | {r['median_load']:.1f} |"
            )
    if "regret" in args.part:
        print(
            f"\nsimulated asynchronous runs, {args.n_calls} evaluations of {args.problem}, "
            f"{args.regret_seeds} seeds:"
        )
        table = regret(args)
        report["regret"] = table
        print("\n| strategy | pending k | median regret | no worse than k = 1 |")
        print("|---|---:|---:|---:|")
        for r in table:
            print(
                f"| {r['strategy']} | {r['k']} | {r['median_regret']:.3g} | "
                f"{r['no_worse_than_k1']:.0%} |"
            )
    if "batch" in args.part:
        print(f"\nconstant-liar batch cost, {args.problem}, N = 50 told points:")
        table = batch_cost(args)
        report["batch"] = table
        print("\n| surrogate | q | s per batch | s per point | fits' share | vs q single asks |")
        print("|---|---:|---:|---:|---:|---:|")
        for r in table:
            print(
                f"| {r['surrogate']} | {r['q']} | {r['seconds']:.2f} | {r['per_point']:.2f} | "
                f"{r['fit_share']:.0%} | {r['vs_q_single_asks']:.2f} |"
            )
    report["load_end"] = os.getloadavg()
    print(
        f"\nload average at the end {report['load_end'][0]:.1f} (1 min), "
        f"{report['load_end'][1]:.1f} (5 min)"
    )
    # Parts run separately are merged into one file; each keeps its own args and load.
    merged = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for part in args.part:
        merged[part] = {
            key: report[key]
            for key in report
            if key in ("args", "cpus", "load_start", "load_end") or key.startswith(part)
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(merged, indent=1, default=float))


if __name__ == "__main__":
    main()

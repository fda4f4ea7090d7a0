"""Wall-clock speed-up of parallel evaluation, and what the lies cost in regret.

Part 1 (``speedup``): 64 evaluations of an objective that takes 0.5 s
(Hartmann6 behind a ``time.sleep(0.5)``), BwO with default settings, with
1, 2 and 4 workers: worker processes (``executor=`` treebo's loky process pool, started
and warmed up before the clock starts) and a Dask ``LocalCluster`` (one
single-threaded worker process per worker, likewise started beforehand).
The baseline, measured in the same run, is the sequential loop
(``minimize(..., n_jobs=1)``: evaluations in the calling process). Reported
per configuration: median wall-clock over the seeds, speed-up over the
sequential run and over the same backend with one worker, median final
regret and the share of seeds where it is no worse than the sequential run's.

Part 2 (``batch``): the cost of a constant-liar batch. ``ask(n_points=q)``
draws the candidates once, then refits the surrogate q times (told data plus
one more lie each time, same seed) and scores the shared candidates. Reported:
seconds per proposed point for q = 1, 4 and 8, against q single asks.

    python benchmarks/parallel_speedup.py                       # both parts, 5 seeds
    python benchmarks/parallel_speedup.py --part speedup --seeds 3 --workers 1 2
    python benchmarks/parallel_speedup.py --part batch

Results are printed and written as JSON to ``benchmarks/results/parallel_speedup.json``.
The load average of the machine at the start and the end is printed with them:
on a shared machine the driver's proposals (about 0.2-0.4 s each when quiet)
slow down and become the bottleneck.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import math
import os
import time
from pathlib import Path

import numpy as np

from treebo import Optimizer, minimize
from treebo.parallel import process_pool, warm_up
from treebo.problems import get_problem

RESULTS = Path(__file__).resolve().parent / "results" / "parallel_speedup.json"


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
    res = minimize(objective, objective.problem.space, n_calls=n_calls, random_state=seed,
                   **kwargs)
    wall = time.perf_counter() - start
    model = [t for t in range(len(res.fit_time)) if res.fit_time[t] > 0]
    return {"seed": seed, "wall": wall, "regret": objective.problem.regret(res.fun),
            "n_told": len(res.x_iters), "n_failed": res.n_failed,
            "propose_s": float(np.median(res.fit_time[model] + res.acq_time[model]))}


def speedup(args: argparse.Namespace) -> list[dict]:
    objective = SlowObjective(args.problem, args.delay)
    rows = []

    def record(backend: str, workers: int, runs: list[dict]) -> None:
        rows.append({"backend": backend, "workers": workers, "runs": runs})
        walls = [r["wall"] for r in runs]
        print(f"  {backend:<10} {workers} worker(s): median {np.median(walls):6.1f} s, "
              f"regret {np.median([r['regret'] for r in runs]):.3g}, "
              f"proposal {np.median([r['propose_s'] for r in runs]):.2f} s", flush=True)

    seeds = range(args.seeds)
    record("sequential", 1, [_run(objective, args.n_calls, s) for s in seeds])
    if "processes" in args.backends:
        for k in args.workers:
            pool = process_pool(k)
            warm = warm_up(pool, k, seconds=0.5)
            print(f"  (process pool of {k} started and warmed up in {warm:.1f} s)")
            record("processes", k, [_run(objective, args.n_calls, s, executor=pool, n_jobs=k)
                                    for s in seeds])
        pool.shutdown(wait=True)
    if "dask" in args.backends:
        from distributed import Client, LocalCluster

        for k in args.workers:
            start = time.perf_counter()
            with LocalCluster(n_workers=k, threads_per_worker=1, processes=True,
                              dashboard_address=None) as cluster, Client(cluster) as client:
                client.run(_import_treebo)  # keep the workers' imports off the clock
                print(f"  (LocalCluster of {k} started in {time.perf_counter() - start:.1f} s)")
                record("dask", k, [_run(objective, args.n_calls, s, executor=client)
                                   for s in seeds])
    return rows


def _summary(rows: list[dict]) -> list[dict]:
    base = rows[0]["runs"]
    base_wall = np.median([r["wall"] for r in base])
    base_regret = {r["seed"]: r["regret"] for r in base}
    one = {row["backend"]: np.median([r["wall"] for r in row["runs"]])
           for row in rows if row["workers"] == 1}
    table = []
    for row in rows:
        wall = np.median([r["wall"] for r in row["runs"]])
        regrets = [r["regret"] for r in row["runs"]]
        no_worse = np.mean([r["regret"] <= base_regret[r["seed"]] for r in row["runs"]])
        table.append({"backend": row["backend"], "workers": row["workers"], "wall_s": wall,
                      "speedup_vs_sequential": base_wall / wall,
                      "speedup_vs_1_worker": one.get(row["backend"], math.nan) / wall,
                      "median_regret": float(np.median(regrets)),
                      "median_log10_regret": float(np.median(np.log10(np.maximum(regrets,
                                                                                 1e-12)))),
                      "no_worse_than_sequential": float(no_worse),
                      "median_proposal_s": float(np.median([r["propose_s"]
                                                            for r in row["runs"]]))})
    return table


def batch_cost(args: argparse.Namespace) -> list[dict]:
    problem = get_problem(args.problem)
    out = []
    for surrogate in ("bwo", "gp"):
        base = Optimizer(problem.space, surrogate, n_initial_points=0, random_state=0)
        for x in problem.space.sample(50, random_state=1):
            base.tell(x, problem(x))
        for q in (1, 4, 8):
            times, fits = [], []
            for rep in range(args.repeats):
                opt = copy.deepcopy(base)
                opt._model_rng = np.random.default_rng(rep)
                start = time.perf_counter()
                opt.ask(n_points=q)
                times.append(time.perf_counter() - start)
                fits.append(sum(t.fit_time for t in opt.trials[-q:]))
            out.append({"surrogate": surrogate, "q": q, "seconds": float(np.median(times)),
                        "per_point": float(np.median(times)) / q,
                        "fit_share": float(np.median(fits) / np.median(times))})
            print(f"  {surrogate:<4} q={q}: {np.median(times):6.2f} s per batch, "
                  f"{np.median(times) / q:5.2f} s per point, fits {out[-1]['fit_share']:.0%}",
                  flush=True)
    for row in out:
        single = next(r for r in out if r["surrogate"] == row["surrogate"] and r["q"] == 1)
        row["vs_q_single_asks"] = row["seconds"] / (row["q"] * single["seconds"])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["speedup", "batch", "both"], default="both")
    parser.add_argument("--problem", default="hartmann6")
    parser.add_argument("--n-calls", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--backends", nargs="+", default=["processes", "dask"],
                        choices=["processes", "dask"])
    parser.add_argument("--repeats", type=int, default=3, help="repetitions in the batch part")
    args = parser.parse_args()
    load_start = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, load average {load_start[0]:.1f} (1 min), "
          f"{load_start[1]:.1f} (5 min)")
    report: dict = {"args": vars(args), "cpus": os.cpu_count(), "load_start": load_start}
    if args.part in ("speedup", "both"):
        print(f"speed-up: {args.n_calls} evaluations of {args.problem} + {args.delay} s, "
              f"{args.seeds} seeds")
        rows = speedup(args)
        table = _summary(rows)
        report.update(speedup_runs=rows, speedup=table)
        print("\n| backend | workers | wall-clock s | speed-up vs sequential | vs 1 worker "
              "| median regret | no worse than sequential | proposal s |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in table:
            print(f"| {r['backend']} | {r['workers']} | {r['wall_s']:.1f} | "
                  f"{r['speedup_vs_sequential']:.2f} | {r['speedup_vs_1_worker']:.2f} | "
                  f"{r['median_regret']:.3g} | {r['no_worse_than_sequential']:.0%} | "
                  f"{r['median_proposal_s']:.2f} |")
    if args.part in ("batch", "both"):
        print(f"\nconstant-liar batch cost, {args.problem}, N = 50 told points:")
        table = batch_cost(args)
        report["batch"] = table
        print("\n| surrogate | q | s per batch | s per point | fits' share | vs q single asks |")
        print("|---|---:|---:|---:|---:|---:|")
        for r in table:
            print(f"| {r['surrogate']} | {r['q']} | {r['seconds']:.2f} | {r['per_point']:.2f} | "
                  f"{r['fit_share']:.0%} | {r['vs_q_single_asks']:.2f} |")
    report["load_end"] = os.getloadavg()
    print(f"\nload average at the end {report['load_end'][0]:.1f} (1 min), "
          f"{report['load_end'][1]:.1f} (5 min)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=1, default=float))


if __name__ == "__main__":
    main()

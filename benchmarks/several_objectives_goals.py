"""The goals of several objectives and constraints, judged on the committed records.

Reads every records file of ``benchmarks/results/several_objectives/`` (written
by ``benchmarks/several_objectives.py``) and prints, per problem, treebo's
median measure and the peers', then each goal with its verdict:

* treebo the best of (TPE, NSGA-II, random) on at least 4 of every 5 problems
  (the median hypervolume with several objectives, the median log10 gap of
  the best feasible value with one), and never behind random search;
* within 5% of Optuna's GP sampler's median hypervolume on at least half of
  the problems with several objectives;
* on the constrained problems: a feasible point on every seed where any peer
  found one, and the best median gap of all the peers (GP included) on at
  least two thirds of them.

A problem is judged only where treebo and the peers compared have the same
seeds recorded; seeds missing from any of them are listed, so a grid cut
short is never read as a finished one.

    python benchmarks/several_objectives_goals.py
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from several_objectives import RECORDS, measure, read_records  # noqa: E402

from treebo.problems.metric_problems import METRIC_PROBLEMS, get_metric_problem  # noqa: E402

PEERS = ("tpe", "nsga2", "random")
ALL_PEERS = (*PEERS, "gp")


def measures(records: list[dict]) -> dict[str, dict[str, dict[int, float]]]:
    """Per problem, per method: the measure of each seed (NaN: nothing feasible)."""
    out: dict[str, dict[str, dict[int, float]]] = {}
    for record in records:
        problem = get_metric_problem(record["problem"])
        by_method = out.setdefault(record["problem"], {})
        by_method.setdefault(record["method"], {})[record["seed"]] = measure(record, problem)
    return out


def _median(values: dict[int, float], seeds: list[int], several: bool) -> float:
    # A seed with nothing feasible counts as the worst outcome, not as a missing one.
    worst = -math.inf if several else math.inf
    return float(np.median([worst if math.isnan(values[s]) else values[s] for s in seeds]))


def _better(a: float, b: float, several: bool) -> bool:
    """Whether ``a`` is at least as good as ``b`` (higher hypervolume, lower gap)."""
    return a >= b if several else a <= b


def judge(table: dict[str, dict[str, dict[int, float]]]) -> dict[str, list[str]]:
    """The verdict lines of each goal, and the problems left out for missing seeds."""
    best_of_peers, behind_random, within_gp, feasible_lines, best_constrained = [], [], [], [], []
    missing = []
    n_compared = n_best = n_several = n_within = n_constrained = n_best_constrained = 0
    for name in METRIC_PROBLEMS:
        row = table.get(name, {})
        several = len(get_metric_problem(name).objectives) > 1
        methods = ["treebo", *(ALL_PEERS if "gp" in row else PEERS)]
        if any(m not in row for m in methods):
            missing.append(f"{name}: no records of {[m for m in methods if m not in row]}")
            continue
        seeds = sorted(set.intersection(*(set(row[m]) for m in methods)))
        unmatched = sorted(set.union(*(set(row[m]) for m in methods)) - set(seeds))
        if unmatched:
            missing.append(f"{name}: seeds {unmatched} not recorded for every method")
        medians = {m: _median(row[m], seeds, several) for m in methods}
        n_compared += 1
        best = all(_better(medians["treebo"], medians[p], several) for p in PEERS)
        n_best += best
        best_of_peers.append(
            f"{name} ({len(seeds)} seeds): treebo {medians['treebo']:.3f}; "
            + ", ".join(f"{p} {medians[p]:.3f}" for p in methods[1:])
            + (" -> best of TPE, NSGA-II, random" if best else " -> not the best")
        )
        if not _better(medians["treebo"], medians["random"], several):
            behind_random.append(name)
        if several and "gp" in medians:
            n_several += 1
            ratio = medians["treebo"] / medians["gp"] if medians["gp"] > 0 else math.inf
            n_within += ratio >= 0.95
            within_gp.append(f"{name}: {ratio:.3f} of the GP sampler's hypervolume")
        if not several:
            n_constrained += 1
            lost = [
                s
                for s in seeds
                if math.isnan(row["treebo"][s])
                and any(not math.isnan(row[p][s]) for p in methods[1:])
            ]
            feasible = sum(not math.isnan(row["treebo"][s]) for s in seeds)
            feasible_lines.append(
                f"{name}: treebo feasible on {feasible}/{len(seeds)} seeds"
                + (f"; infeasible where a peer was feasible: seeds {lost}" if lost else "")
            )
            top = all(_better(medians["treebo"], medians[p], False) for p in methods[1:])
            n_best_constrained += top
            best_constrained.append(
                f"{name}: {'best' if top else 'not best'} of {', '.join(methods[1:])}"
            )
    verdicts = {
        "best of TPE, NSGA-II and random on at least 4 of every 5 problems": [
            f"{n_best} of {n_compared} -> {_met(n_best >= 0.8 * n_compared)}",
            *best_of_peers,
        ],
        "never behind random search": [
            f"behind on {behind_random or 'none'} -> {_met(not behind_random)}"
        ],
        "within 5% of Optuna's GP sampler on at least half of the problems with several "
        "objectives": [
            f"{n_within} of {n_several} -> {_met(2 * n_within >= n_several)}",
            *within_gp,
        ],
        "a feasible point on every seed where any peer found one": feasible_lines
        + [_met(all("infeasible where" not in line for line in feasible_lines))],
        "best feasible value the best of the peers on two thirds of the constrained problems": [
            f"{n_best_constrained} of {n_constrained} -> "
            f"{_met(3 * n_best_constrained >= 2 * n_constrained)}",
            *best_constrained,
        ],
    }
    if missing:
        verdicts["left out or incomplete"] = missing
    return verdicts


def _met(ok: bool) -> str:
    return "met" if ok else "NOT MET"


def main() -> None:
    for goal, lines in judge(measures(read_records(RECORDS.parent))).items():
        print(goal)
        for line in lines:
            print(f"  {line}")


if __name__ == "__main__":
    main()

"""The exploration goals, judged on the committed regret grid (treebo's surrogates and peers).

Reads every record in ``benchmarks/results/regret/grid/`` (written by
``treebo bench`` and ``python -m benchmarks.peers``), and for each problem prints
the median over seeds of the final log10 best-so-far regret of every method,
the number of seeds recorded, and then each goal with its verdict:

* ``bwo`` at most the best tree-based peer (``skopt_et``, ``skopt_rf``,
  ``smac_rf``) on every problem;
* ``bwo`` never worse than uniform random search;
* ``bwo`` ahead of Optuna TPE on at least two thirds of the problems;
* ``bwo`` within one decade of the best Gaussian-process method (``gp``,
  ``optuna_gp``, ``skopt_gp``) on every problem, and ahead of it (a lower
  median) on at least 6;
* no problem where more than 3 of 10 ``bwo`` seeds *stall*: gain less than
  0.05 decades of regret between the middle and the end of the run (50 and
  100 evaluations on the continuous problems; 30 and 55 on the binary ones)
  while the regret is above 1e-2;
* no regression beyond one decade on Branin, Michalewicz, Bohachevsky and
  Rosenbrock against a search without exploration (-2.47, -5.40, -0.10,
  0.58: medians over 5 seeds, :data:`WITHOUT_EXPLORATION`). The same search's
  runs over 10 seeds (``benchmarks/results/regret/without_exploration/``) are
  printed beside them: 5 seeds were a basin lottery.

A comparison is only made where both methods have all 10 seeds; missing runs
are listed, so an unfinished grid is never read as a finished one.

    python benchmarks/regret_goals.py                     # table and verdicts
    python benchmarks/regret_goals.py --out regret_goals.json --figure regret_grid.png
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from treebo.bench import load_results, regret_curves, surrogate_order

TREE_PEERS = ("skopt_et", "skopt_rf", "smac_rf")
GP_METHODS = ("gp", "optuna_gp", "skopt_gp")
GP_MARGIN = 1.0  # decades
MIN_AHEAD_OF_GP = 6
#: Median final log10 regret of bwo without exploration, over 5 seeds: the regression guard.
WITHOUT_EXPLORATION = {
    "branin": -2.47,
    "michalewicz_2": -5.40,
    "bohachevsky": -0.10,
    "rosenbrock_4": 0.58,
}
RESULTS = Path(__file__).resolve().parent / "results" / "regret"
N_SEEDS = 10
STALL_GAIN = 0.05  # decades
STALL_REGRET = 1e-2
MAX_STALLED = 3


def _column(n_evaluations: int, n_initial: int = 5) -> int:
    """Column of :class:`treebo.bench.Curves` holding the best after ``n_evaluations``."""
    return n_evaluations - n_initial


def grid_table(records: list[dict]) -> dict[str, dict]:
    """Per problem: final medians, seed counts and bwo's stalled seeds.

    Returns
    -------
    dict
        ``{problem: {"median": {method: m}, "n_seeds": {method: n},
        "stalled": k or None, "n_calls": c}}``; ``m`` is the median of the
        final log10 regret, ``k`` the number of bwo seeds that stall.
    """
    table: dict[str, dict] = {}
    for c in regret_curves(records):
        if c.kind != "regret":
            continue
        row = table.setdefault(c.problem, {"median": {}, "n_seeds": {}, "stalled": None})
        logs = c.log10
        row["median"][c.surrogate] = float(np.nanmedian(logs[:, -1]))
        row["n_seeds"][c.surrogate] = len(c.seeds)
        n_calls = logs.shape[1] - 1 + 5
        row["n_calls"] = n_calls
        if c.surrogate == "bwo":
            middle = _column(30 if n_calls < 100 else 50)
            gain = logs[:, middle] - logs[:, -1]
            stalled = (gain < STALL_GAIN) & (c.curves[:, -1] > STALL_REGRET)
            row["stalled"] = int(stalled.sum())
    return table


def _complete(row: dict, *methods: str) -> bool:
    return all(row["n_seeds"].get(m, 0) >= N_SEEDS for m in methods)


def verdicts(table: dict[str, dict]) -> dict[str, dict]:
    """Each goal: the problems it holds on, fails on, and cannot be judged on yet."""
    goals: dict[str, dict] = {
        name: {"met": [], "failed": [], "open": []}
        for name in (
            "best tree peer",
            "random",
            "optuna_tpe",
            "best gaussian process",
            "ahead of the best gaussian process",
            "stalls",
            "regression",
        )
    }

    def judge(goal: str, problem: str, ready: bool, ok: bool, detail: str) -> None:
        goals[goal]["open" if not ready else "met" if ok else "failed"].append(
            f"{problem} ({detail})"
        )

    for problem, row in sorted(table.items()):
        med = row["median"]
        bwo = med.get("bwo")
        peers = [p for p in TREE_PEERS if p in med]
        if bwo is not None and peers:
            best = min(peers, key=med.get)
            # A finished peer already ahead of bwo decides the goal: an
            # unfinished one can only add another peer ahead.
            finished_ahead = _complete(row, "bwo", best) and med[best] < bwo
            ready = finished_ahead or _complete(row, "bwo", *TREE_PEERS)
            judge(
                "best tree peer",
                problem,
                ready,
                bwo <= med[best],
                f"bwo {bwo:.2f}, {best} {med[best]:.2f}",
            )
        for other, goal in (("random", "random"), ("optuna_tpe", "optuna_tpe")):
            if bwo is not None and other in med:
                judge(
                    goal,
                    problem,
                    _complete(row, "bwo", other),
                    bwo <= med[other],
                    f"bwo {bwo:.2f}, {other} {med[other]:.2f}",
                )
        gps = [m for m in GP_METHODS if m in med]
        if bwo is not None and gps:
            best = min(gps, key=med.get)
            detail = f"bwo {bwo:.2f}, {best} {med[best]:.2f}"
            # A finished method that already beats bwo decides a failure, as
            # for the tree peers: an unfinished one can only lower the best.
            finished = [m for m in gps if _complete(row, "bwo", m)]
            best_finished = min((med[m] for m in finished), default=np.inf)
            all_done = _complete(row, "bwo", *GP_METHODS)
            judge(
                "best gaussian process",
                problem,
                all_done or best_finished < bwo - GP_MARGIN,
                bwo <= med[best] + GP_MARGIN,
                detail,
            )
            judge(
                "ahead of the best gaussian process",
                problem,
                all_done or best_finished <= bwo,
                bwo < med[best],
                detail,
            )
        if row["stalled"] is not None:
            judge(
                "stalls",
                problem,
                _complete(row, "bwo"),
                row["stalled"] <= MAX_STALLED,
                f"{row['stalled']} of {row['n_seeds']['bwo']} seeds stall",
            )
        guard = WITHOUT_EXPLORATION.get(problem)
        if guard is not None and bwo is not None:
            judge(
                "regression",
                problem,
                _complete(row, "bwo"),
                bwo <= guard + 1.0,
                f"bwo {bwo:.2f}, without exploration {guard:.2f}",
            )
    return goals


def format_table(table: dict[str, dict]) -> str:
    methods = surrogate_order(m for row in table.values() for m in row["median"])
    lines = [
        "| problem | " + " | ".join(methods) + " | bwo seeds stalled |",
        "|---|" + "---:|" * len(methods) + "---:|",
    ]
    for problem, row in sorted(table.items()):
        cells = []
        for m in methods:
            if m not in row["median"]:
                cells.append("")
                continue
            n = row["n_seeds"][m]
            value = f"{row['median'][m]:.2f}"
            best = min(row["median"].values())
            value = f"**{value}**" if row["median"][m] == best else value
            cells.append(value if n >= N_SEEDS else f"{value} ({n} seeds)")
        stalled = "" if row["stalled"] is None else f"{row['stalled']}/{row['n_seeds']['bwo']}"
        lines.append(f"| {problem} | " + " | ".join(cells) + f" | {stalled} |")
    return "\n".join(lines)


def plot_grid(table: dict[str, dict], path: str) -> None:
    """Median final log10 regret of each method relative to random search, per problem."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    problems = sorted(table)
    methods = [
        m for m in surrogate_order(m for r in table.values() for m in r["median"]) if m != "random"
    ]
    gaps = np.full((len(problems), len(methods)), np.nan)
    partial = np.zeros(gaps.shape, dtype=bool)
    for i, problem in enumerate(problems):
        row = table[problem]
        for j, m in enumerate(methods):
            if m in row["median"] and "random" in row["median"]:
                gaps[i, j] = row["median"][m] - row["median"]["random"]
                partial[i, j] = row["n_seeds"][m] < N_SEEDS
    fig, ax = plt.subplots(figsize=(1.0 + 0.75 * len(methods), 0.45 * len(problems) + 1.5))
    limit = np.nanmax(np.abs(gaps)) if np.isfinite(gaps).any() else 1.0
    image = ax.imshow(gaps, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
    for i in range(len(problems)):
        for j in range(len(methods)):
            if np.isfinite(gaps[i, j]):
                mark = "*" if partial[i, j] else ""
                ax.text(j, i, f"{gaps[i, j]:.1f}{mark}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(methods)), methods, rotation=45, ha="right")
    ax.set_yticks(range(len(problems)), problems)
    fig.colorbar(image, ax=ax, label="median final log10 regret minus random search's")
    title = "Regret grid: lower (blue) is better than random search"
    if partial.any():
        title += f"\n* fewer than {N_SEEDS} seeds so far; empty: not run yet"
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(RESULTS / "grid"))
    parser.add_argument("--out", default=None, help="write table and verdicts as JSON here")
    parser.add_argument("--figure", default=None, help="write the heat map here (PNG)")
    args = parser.parse_args()
    records = load_results(args.results)
    table = grid_table(records)
    goals = verdicts(table)
    print(format_table(table))
    for goal, verdict in goals.items():
        print(
            f"\n{goal}: met on {len(verdict['met'])}, failed on {len(verdict['failed'])}, "
            f"not judged yet on {len(verdict['open'])}"
        )
        for problem in verdict["failed"]:
            print(f"  failed: {problem}")
        for problem in verdict["open"]:
            print(f"  open:   {problem}")
    ahead = goals["ahead of the best gaussian process"]
    if ahead["met"] or ahead["failed"]:
        print(
            f"\nahead of the best Gaussian-process method on {len(ahead['met'])} problems "
            f"(goal: at least {MIN_AHEAD_OF_GP}: "
            f"{'met' if len(ahead['met']) >= MIN_AHEAD_OF_GP else 'not met'})"
        )
    tpe = goals["optuna_tpe"]
    judged = len(tpe["met"]) + len(tpe["failed"])
    if judged:
        print(
            f"\nahead of Optuna TPE on {len(tpe['met'])} of {judged} judged problems "
            f"(goal: at least two thirds)"
        )
    without = RESULTS / "without_exploration"
    if without.is_dir():
        print(f"\nwithout exploration over 10 seeds (median final log10 regret), from {without}:")
        for problem, row in sorted(grid_table(load_results(without)).items()):
            if "bwo" in row["median"] and problem in table:
                print(
                    f"  {problem}: without exploration {row['median']['bwo']:.2f} "
                    f"({row['n_seeds']['bwo']} seeds; {row['stalled']} stall), "
                    f"grid {table[problem]['median'].get('bwo', float('nan')):.2f}, "
                    f"5-seed figure {WITHOUT_EXPLORATION.get(problem, float('nan')):.2f}"
                )
    if args.out:
        with open(args.out, "w") as handle:
            json.dump({"table": table, "goals": goals}, handle, indent=1)
    if args.figure:
        plot_grid(table, args.figure)


if __name__ == "__main__":
    main()

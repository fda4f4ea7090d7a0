"""The model-selection goal, judged on the committed records.

Reads the records of the conditional model-selection problems
(``model_selection_*``, written by ``treebo bench`` and
``python -m benchmarks.peers`` into ``benchmarks/results/regret/grid/``) and prints, per
data set, the median over seeds of each method's best 5-fold CV error after
50 evaluations (10 initial points), the seed counts, and the verdict of the
goal: treebo's ``bwo`` has the lowest median on at least 2 of the 3 data
sets. A data set is judged only when every method has all 10 seeds.

    python -m treebo bench --problems model_selection --surrogates bwo --seeds 0-9 \
        --out benchmarks/results/regret/grid --n-jobs 1
    python -m benchmarks.peers --problems model_selection --peers random optuna_tpe smac_rf \
        --seeds 0-9 --out benchmarks/results/regret/grid
    python benchmarks/model_selection_goals.py
"""

from __future__ import annotations

import argparse
from pathlib import Path

from treebo.bench import load_results, summary_table
from treebo.problems import problem_suites

METHODS = ("bwo", "optuna_tpe", "smac_rf", "random")
N_SEEDS = 10


def goal_table(records: list[dict]) -> dict[str, dict]:
    """``{problem: {"median": {method: m}, "n_seeds": {method: n}}}`` for model selection."""
    problems = set(problem_suites()["model_selection"])
    table = summary_table([r for r in records if r["problem"] in problems])
    return {p: {"median": row["median"], "n_seeds": row["n_seeds"]} for p, row in table.items()}


def verdict(table: dict[str, dict]) -> tuple[list[str], list[str], list[str]]:
    """Data sets where bwo has the lowest median, where it does not, and not judged yet."""
    won, lost, open_ = [], [], []
    for problem, row in sorted(table.items()):
        if not all(row["n_seeds"].get(m, 0) >= N_SEEDS for m in METHODS):
            open_.append(problem)
        elif row["median"]["bwo"] <= min(row["median"][m] for m in METHODS):
            won.append(problem)
        else:
            lost.append(problem)
    return won, lost, open_


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--results", default=str(Path(__file__).resolve().parent / "results" / "regret" / "grid")
    )
    args = parser.parse_args()
    table = goal_table(load_results(args.results))
    print(
        f"Median best 5-fold CV error after 50 evaluations (n seeds where fewer than {N_SEEDS})\n"
    )
    print("| data set | " + " | ".join(METHODS) + " |")
    print("|---|" + "---:|" * len(METHODS))
    for problem, row in sorted(table.items()):
        cells = []
        for m in METHODS:
            if m not in row["median"]:
                cells.append("")
                continue
            n = row["n_seeds"][m]
            cells.append(f"{row['median'][m]:.4f}" + ("" if n >= N_SEEDS else f" ({n})"))
        print(f"| {problem} | " + " | ".join(cells) + " |")
    won, lost, open_ = verdict(table)
    state = (
        "met" if len(won) >= 2 else "not met" if len(won) + len(open_) < 2 else "not decided yet"
    )
    print(
        f"\nGoal: bwo lowest on at least 2 of 3 data sets. Lowest on {len(won)} "
        f"({', '.join(won) or 'none'}), not on {len(lost)} ({', '.join(lost) or 'none'}), "
        f"not judged yet {len(open_)} ({', '.join(open_) or 'none'}): {state}."
    )


if __name__ == "__main__":
    main()

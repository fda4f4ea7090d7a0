"""COCO bbob goals, judged on the committed records (treebo's surrogates and the peers).

Reads the records in ``benchmarks/results/bbob/`` (written by ``treebo bench``
and ``python -m benchmarks.peers`` with ``--problems bbob``), cuts every run to the
budget (20 evaluations per dimension by default), and takes each run's final
precision ``log10(f_best - f_opt)``, clipped at -8 (COCO's final target). Per
dimension and function it prints the median over the protocol's runs
(instances 1-3, one run each with seed 0, unless ``--instances`` and
``--seeds`` say otherwise) of every method, and then the goals with their
verdicts, per dimension:

* ``bwo``'s median is the lowest of (``optuna_tpe``, ``optuna_cmaes``,
  ``smac_rf``, ``skopt_et``, ``random``) on at least two thirds of the
  functions (ties count for ``bwo``);
* ``bwo``'s median is within one decade of ``optuna_gp``'s (at most 1.0
  above it) on at least half of the functions;

and, in 10 dimensions, on the sphere f1 after 200 evaluations:
``f_best - f_opt <= 1e-3`` on every run of instances 1-3.

A function is judged only where every method the goal compares has all its
runs at the full budget; missing runs are listed, so an unfinished grid is
never read as a finished one (a finished peer already ahead of ``bwo`` does
decide the first goal). The longer runs of the protocol (50 evaluations per
dimension, 10-D, f1, f2, f8, f10, f15, f21) are shown with ``--budget-per-dim
50 --dims 10``.

    python benchmarks/bbob_goals.py                      # tables and verdicts
    python benchmarks/bbob_goals.py --out bbob_goals.json \\
        --figure bbob_heatmap.png --ecdf bbob_ecdf.png
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from treebo.bench import load_results, parse_int_ranges, regret_curves, surrogate_order
from treebo.problems.bbob import BBOB_FUNCTIONS, BBOB_PROTOCOL, is_bbob_name, parse_bbob_name

METHOD = "bwo"
BEST_OF = ("optuna_tpe", "optuna_cmaes", "smac_rf", "skopt_et", "random")
GP = "optuna_gp"
CLIP = -8.0  # log10 of COCO's final target precision
BEST_SHARE = 2 / 3
GP_SHARE = 1 / 2
GP_DECADES = 1.0
SPHERE = {"function": 1, "dim": 10, "n_evaluations": 200, "precision": 1e-3}
DEFAULT_RESULTS = Path(__file__).parent / "results" / "bbob"
# Column order of tables and figures after treebo's surrogates: the GP, the model-based
# peers, random search last.
PEER_ORDER = (GP, "optuna_tpe", "optuna_cmaes", "smac_rf", "skopt_et", "random")


def method_order(names: Iterable[str]) -> list[str]:
    """Distinct method names: treebo's surrogates (registry order), then the peers, then others."""
    names = set(names)
    ours = [n for n in surrogate_order(sorted(names)) if n not in PEER_ORDER]
    return ours + [n for n in PEER_ORDER if n in names]


def _functions_text(functions: Sequence[int]) -> str:
    """``f1-f3, f8``: consecutive function numbers as ranges; ``none`` for none."""
    parts: list[str] = []
    for f in sorted(functions):
        if parts and parts[-1][1] == f - 1:
            parts[-1][1] = f
        else:
            parts.append([f, f])
    return ", ".join(f"f{a}" if a == b else f"f{a}-f{b}" for a, b in parts) or "none"


def final_precisions(
    records: Iterable[dict], budget_per_dim: int = 20
) -> dict[tuple[int, int, str], dict[tuple[int, int], float]]:
    """Final log10 precision of every run that reached its budget.

    Parameters
    ----------
    records : iterable of dict
        Benchmark records; those of other problems, of the ``paper`` preset
        and runs shorter than ``budget_per_dim`` times their dimension are left
        out (a longer run is cut to the budget).
    budget_per_dim : int, default 20

    Returns
    -------
    dict
        ``{(dim, function, method): {(instance, seed): log10 precision}}``,
        the precision ``f_best - f_opt`` after the budget, clipped at -8.
    """
    chosen = []
    for record in records:
        if not is_bbob_name(record["problem"]) or record.get("preset", "default") != "default":
            continue
        dim = parse_bbob_name(record["problem"])[1]
        if record["n_evaluated"] >= budget_per_dim * dim and record.get("regret") is not None:
            chosen.append(record)
    out: dict[tuple[int, int, str], dict[tuple[int, int], float]] = {}
    by_budget: dict[int, list[dict]] = {}
    for record in chosen:
        by_budget.setdefault(budget_per_dim * parse_bbob_name(record["problem"])[1], []).append(
            record
        )
    for budget, group in by_budget.items():
        for curves in regret_curves(group, n_calls=budget):
            function, dim, instance = parse_bbob_name(curves.problem)
            finals = np.maximum(np.log10(curves.curves[:, -1]), CLIP)
            cell = out.setdefault((dim, function, curves.surrogate), {})
            for seed, value in zip(curves.seeds, finals):
                cell[(instance, int(seed))] = float(value)
    return out


def goal_table(
    records: Iterable[dict],
    budget_per_dim: int = 20,
    instances: Sequence[int] = BBOB_PROTOCOL["instances"],
    seeds: Sequence[int] = BBOB_PROTOCOL["seeds"],
) -> dict[int, dict[int, dict]]:
    """Per dimension and function, each method's median final precision over the protocol's runs.

    Returns
    -------
    dict
        ``{dim: {function: {"median": {method: m}, "n_runs": {method: k},
        "complete": {method: bool}}}}``: ``m`` the median final log10
        precision over the runs of ``instances`` x ``seeds`` recorded (others
        are ignored), ``k`` their number, ``complete`` whether all of them are.
    """
    wanted = {(int(i), int(s)) for i in instances for s in seeds}
    table: dict[int, dict[int, dict]] = {}
    for (dim, function, method), runs in sorted(final_precisions(records, budget_per_dim).items()):
        values = [v for key, v in runs.items() if key in wanted]
        if not values:
            continue
        row = table.setdefault(dim, {}).setdefault(
            function, {"median": {}, "n_runs": {}, "complete": {}}
        )
        row["median"][method] = float(np.median(values))
        row["n_runs"][method] = len(values)
        row["complete"][method] = wanted <= set(runs)
    return table


def _status(met: int, open_: int, needed: int) -> str:
    if met >= needed:
        return "met"
    return "not met" if met + open_ < needed else "not decided yet"


def verdicts(
    table: dict[int, dict[int, dict]], functions: Sequence[int] = BBOB_PROTOCOL["functions"]
) -> dict[int, dict]:
    """Per dimension: on which functions each goal holds, fails, or cannot be judged yet.

    Parameters
    ----------
    table : dict
        As :func:`goal_table` returns it.
    functions : sequence of int
        The functions the shares are counted over (the protocol's 24); a
        function without records is not judged.

    Returns
    -------
    dict
        ``{dim: {"best": {...}, "gp": {...}}}``, each with ``met``, ``failed``
        and ``open`` (lists of function numbers), ``needed`` (how many
        functions the goal asks for) and ``status`` (``"met"``, ``"not
        met"`` or ``"not decided yet"``).
    """
    out: dict[int, dict] = {}
    for dim, rows in sorted(table.items()):
        goals = {
            "best": {
                "met": [],
                "failed": [],
                "open": [],
                "needed": math.ceil(BEST_SHARE * len(functions) - 1e-9),
            },
            "gp": {
                "met": [],
                "failed": [],
                "open": [],
                "needed": math.ceil(GP_SHARE * len(functions) - 1e-9),
            },
        }
        for function in functions:
            row = rows.get(function, {"median": {}, "complete": {}})
            med, done = row["median"], row["complete"]
            ours = med.get(METHOD) if done.get(METHOD) else None
            finished = [m for m in BEST_OF if done.get(m)]
            if ours is None:
                goals["best"]["open"].append(function)
            elif len(finished) == len(BEST_OF):
                best = min(med[m] for m in BEST_OF)
                goals["best"]["met" if ours <= best else "failed"].append(function)
            elif any(med[m] < ours for m in finished):  # already decided against bwo
                goals["best"]["failed"].append(function)
            else:
                goals["best"]["open"].append(function)
            if ours is None or not done.get(GP):
                goals["gp"]["open"].append(function)
            else:
                goals["gp"]["met" if ours <= med[GP] + GP_DECADES else "failed"].append(function)
        for goal in goals.values():
            goal["status"] = _status(len(goal["met"]), len(goal["open"]), goal["needed"])
        out[dim] = goals
    return out


def sphere_verdict(
    records: Iterable[dict],
    instances: Sequence[int] = BBOB_PROTOCOL["instances"],
    seeds: Sequence[int] = BBOB_PROTOCOL["seeds"],
) -> dict:
    """The 10-D sphere goal: ``f_best - f_opt <= 1e-3`` after 200 evaluations on every run.

    Returns
    -------
    dict
        ``{"precision": {"i<instance> s<seed>": log10 precision}, "missing":
        [...], "status": "met" | "not met" | "not decided yet"}`` for
        ``bwo``; a run that misses the target decides the goal even while
        others are missing.
    """
    per_dim = SPHERE["n_evaluations"] / SPHERE["dim"]
    runs = final_precisions(records, int(per_dim)).get(
        (SPHERE["dim"], SPHERE["function"], METHOD), {}
    )
    target = math.log10(SPHERE["precision"])
    precision = {f"i{i} s{s}": runs[(i, s)] for i in instances for s in seeds if (i, s) in runs}
    missing = [f"i{i} s{s}" for i in instances for s in seeds if (i, s) not in runs]
    if any(v > target for v in precision.values()):
        status = "not met"
    else:
        status = "not decided yet" if missing else "met"
    return {"precision": precision, "missing": missing, "status": status}


def format_table(rows: dict[int, dict], n_runs: int) -> str:
    """A Markdown table of one dimension: functions by methods, the lowest median in bold.

    A cell with fewer than ``n_runs`` runs shows the count, e.g. ``-1.20 (2 runs)``.
    """
    methods = method_order(m for row in rows.values() for m in row["median"])
    lines = ["| function | " + " | ".join(methods) + " |", "|---|" + "---:|" * len(methods)]
    for function, row in sorted(rows.items()):
        lowest = min(row["median"].values())
        cells = []
        for m in methods:
            if m not in row["median"]:
                cells.append("–")
                continue
            text = f"{row['median'][m]:.2f}"
            text = f"**{text}**" if row["median"][m] == lowest else text
            if not row["complete"][m]:
                text += f" ({row['n_runs'][m]} of {n_runs} runs)"
            cells.append(text)
        lines.append(f"| f{function:02d} {BBOB_FUNCTIONS[function]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_verdicts(goals: dict[int, dict], sphere: dict | None = None) -> str:
    """The goals' verdicts as Markdown bullet points, one per dimension and goal."""
    lines = []
    names = {
        "best": f"{METHOD} lowest of ({', '.join(BEST_OF)})",
        "gp": f"{METHOD} within {GP_DECADES:g} decade of {GP}",
    }
    for dim, by_goal in sorted(goals.items()):
        for key, goal in by_goal.items():
            listed = [
                f"{len(goal[k])} ({_functions_text(goal[k])})" for k in ("met", "failed", "open")
            ]
            lines.append(
                f"- {dim}-D, {names[key]}: on {listed[0]}, not on {listed[1]}, not "
                f"judged yet on {listed[2]}; needed on {goal['needed']}: "
                f"**{goal['status']}**"
            )
    if sphere is not None:
        shown = ", ".join(f"{k}: {v:.2f}" for k, v in sphere["precision"].items()) or "no runs"
        missing = f"; missing {', '.join(sphere['missing'])}" if sphere["missing"] else ""
        lines.append(
            f"- {SPHERE['dim']}-D sphere f1 after {SPHERE['n_evaluations']} "
            f"evaluations, {METHOD}'s log10 precision ≤ "
            f"{math.log10(SPHERE['precision']):.0f} on every run ({shown}{missing}): "
            f"**{sphere['status']}**"
        )
    return "\n".join(lines)


# -- figures ---------------------------------------------------------------------------------
def plot_heatmap(table: dict[int, dict[int, dict]], path: str | Path) -> None:
    """Per dimension, decades behind the best method on each function (0: the best).

    Cells are annotated with the median final log10 precision; a star marks a
    method with runs missing.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dims = sorted(table)
    methods = method_order(
        m for rows in table.values() for row in rows.values() for m in row["median"]
    )
    functions = sorted({f for rows in table.values() for f in rows})
    fig, axes = plt.subplots(
        1,
        len(dims),
        figsize=(0.1 + (0.65 * len(methods) + 1.2) * len(dims), 0.3 * len(functions) + 2.0),
        squeeze=False,
    )
    image = None
    for ax, dim in zip(axes[0], dims):
        gaps = np.full((len(functions), len(methods)), np.nan)
        for i, function in enumerate(functions):
            row = table[dim].get(function)
            if row is None:
                continue
            lowest = min(row["median"].values())
            for j, m in enumerate(methods):
                if m in row["median"]:
                    gaps[i, j] = row["median"][m] - lowest
                    mark = "" if row["complete"][m] else "*"
                    ax.text(
                        j, i, f"{row['median'][m]:.1f}{mark}", ha="center", va="center", fontsize=6
                    )
        image = ax.imshow(gaps, cmap="YlOrRd", vmin=0.0, vmax=4.0, aspect="auto")
        ax.set_xticks(range(len(methods)), methods, rotation=45, ha="right", fontsize=7)
        ax.set_yticks(range(len(functions)), [f"f{f}" for f in functions], fontsize=7)
        ax.set_title(f"{dim}-D", fontsize=9, pad=4)
    if image is not None:
        fig.colorbar(image, ax=axes[0].tolist(), label="decades behind the best median")
    fig.suptitle(
        "bbob: median final log10(f_best - f_opt) per function (annotated); colour: "
        "decades behind the row's best; * runs missing",
        fontsize=8,
        y=0.95,
    )
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def ecdf(
    records: Iterable[dict],
    dim: int,
    budget_per_dim: int = 20,
    instances: Sequence[int] = BBOB_PROTOCOL["instances"],
    seeds: Sequence[int] = BBOB_PROTOCOL["seeds"],
    targets: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """COCO-style runtime ECDF: share of (run, target) pairs reached within each budget.

    Parameters
    ----------
    records : iterable of dict
    dim : int
    budget_per_dim : int, default 20
    instances, seeds : sequence of int
        The runs counted (of every function recorded in ``dim`` dimensions).
    targets : ndarray, optional
        Precisions; by default COCO's 51 targets ``10^2 ... 10^-8``.

    Returns
    -------
    dict of str to (ndarray of shape (budget_per_dim * dim,), int)
        Per method, the share after 1, 2, ... evaluations, and the number of
        runs it counts.
    """
    targets = np.logspace(2, -8, 51) if targets is None else np.asarray(targets)
    budget = budget_per_dim * dim
    wanted = {(int(i), int(s)) for i in instances for s in seeds}
    selected = [
        r
        for r in records
        if is_bbob_name(r["problem"])
        and parse_bbob_name(r["problem"])[1] == dim
        and r.get("preset", "default") == "default"
        and r["n_evaluated"] >= budget
        and r.get("regret") is not None
    ]
    hits: dict[str, list[np.ndarray]] = {}
    for curves in regret_curves(selected, n_calls=budget) if selected else []:
        instance = parse_bbob_name(curves.problem)[2]
        # Column 0 is the best of the initial design; before it nothing is reached.
        n0 = curves.n_initial
        for seed, row in zip(curves.seeds, curves.curves):
            if (instance, int(seed)) not in wanted:
                continue
            best = np.concatenate([np.full(n0 - 1, np.inf), row])  # per evaluation
            reached = best[None, :] <= targets[:, None]  # (targets, evaluations)
            hits.setdefault(curves.surrogate, []).append(reached)
    return {m: (np.mean(np.concatenate(v), axis=0), len(v)) for m, v in hits.items()}


def plot_ecdf(records: list[dict], path: str | Path, dims: Sequence[int] | None = None) -> None:
    """One panel per dimension: the runtime ECDF of every method (:func:`ecdf`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dims = sorted(
        dims or {parse_bbob_name(r["problem"])[1] for r in records if is_bbob_name(r["problem"])}
    )
    fig, axes = plt.subplots(
        1, len(dims), figsize=(4.0 * len(dims), 3.4), squeeze=False, sharey=True
    )
    for ax, dim in zip(axes[0], dims):
        curves = ecdf(records, dim)
        for method in method_order(curves):
            share, n_runs = curves[method]
            ax.plot(
                np.arange(1, len(share) + 1) / dim,
                share,
                label=f"{method} ({n_runs} runs)",
                lw=2.0 if method == METHOD else 1.2,
            )
        ax.set_title(f"{dim}-D", fontsize=9)
        ax.set_xlabel("evaluations / dimension")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("share of (run, target) pairs reached")
    axes[0][-1].legend(fontsize=7, loc="upper left")
    fig.suptitle("bbob runtime ECDF over all functions, 51 targets 1e2 ... 1e-8", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", default=str(DEFAULT_RESULTS))
    parser.add_argument("--budget-per-dim", type=int, default=20)
    parser.add_argument("--dims", nargs="+", help="dimensions to show (default: all recorded)")
    parser.add_argument(
        "--functions", nargs="+", help="functions the goals count over (default: 1-24)"
    )
    parser.add_argument("--instances", nargs="+", default=["1-3"])
    parser.add_argument("--seeds", nargs="+", default=[str(s) for s in BBOB_PROTOCOL["seeds"]])
    parser.add_argument("--out", help="write tables and verdicts as JSON here")
    parser.add_argument("--figure", help="write the heat map here (PNG)")
    parser.add_argument("--ecdf", help="write the runtime ECDF here (PNG)")
    args = parser.parse_args(argv)
    instances = parse_int_ranges(args.instances, "--instances")
    seeds = parse_int_ranges(args.seeds, "--seeds")
    functions = (
        parse_int_ranges(args.functions, "--functions")
        if args.functions
        else list(BBOB_PROTOCOL["functions"])
    )
    records = load_results(args.results) if Path(args.results).exists() else []
    table = goal_table(records, args.budget_per_dim, instances, seeds)
    if args.dims:
        keep = set(parse_int_ranges(args.dims, "--dims"))
        table = {d: rows for d, rows in table.items() if d in keep}
    if not table:
        print(
            f"no bbob runs with {args.budget_per_dim} evaluations per dimension in {args.results}"
        )
        return 1
    n_runs = len(instances) * len(seeds)
    for dim, rows in sorted(table.items()):
        print(
            f"\n{dim}-D, {args.budget_per_dim * dim} evaluations: median final "
            f"log10(f_best - f_opt) over instances {instances}, seeds {seeds}\n"
        )
        print(format_table(rows, n_runs))
    goals = verdicts(table, functions)
    sphere = sphere_verdict(records, instances, seeds) if args.budget_per_dim == 20 else None
    print("\n" + format_verdicts(goals, sphere))
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(
                {
                    "budget_per_dim": args.budget_per_dim,
                    "instances": instances,
                    "seeds": seeds,
                    "table": table,
                    "goals": goals,
                    "sphere": sphere,
                },
                handle,
                indent=1,
            )
    if args.figure:
        plot_heatmap(table, args.figure)
    if args.ecdf:
        plot_ecdf(records, args.ecdf, sorted(table))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

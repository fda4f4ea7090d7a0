"""Multi-fidelity benchmark: treebo's ``minimize_multifidelity`` against its peers.

Runs every peer on the multi-fidelity problems of
:mod:`treebo.problems.multifidelity` for the same total budget (in units of
the problem's ``max_budget``) and appends one JSON record per run to
``<out>/<problem>.jsonl`` (:func:`treebo.bench.append_record`); runs whose
key is already recorded are skipped, so a killed grid resumes where it
stopped. ``--summary`` prints the goal figures from the records.

    python benchmarks/multifidelity.py --seeds 0-2 --out benchmarks/results/multifidelity
    python benchmarks/multifidelity.py --summary benchmarks/results/multifidelity
    python benchmarks/multifidelity.py --speedup mf_hartmann6 --workers 1 2 4 --seeds 0-9 \\
        --seconds-per-budget 4 --out benchmarks/results/multifidelity/speedup
    python benchmarks/multifidelity.py --speedup-summary benchmarks/results/multifidelity/speedup

Peers:

``treebo_mf``         ``minimize_multifidelity(problem, space, min_budget, max_budget,
                      total_budget, eta=3, random_state=seed)``, its defaults
``hyperband_random``  the same Hyperband schedule with random configurations
                      (``random_fraction=1``)
``treebo_full``       ``minimize(problem at max_budget, n_calls=total_budget,
                      random_state=seed)``: every evaluation at full budget
``optuna_hyperband``  Optuna ``TPESampler(seed=seed)`` with ``HyperbandPruner(
                      min_resource=1, max_resource=max_budget / min_budget,
                      reduction_factor=3)``, ask and tell; a trial reports its
                      value at every rung budget and stops when pruned
``smac_mf``           SMAC3 ``MultiFidelityFacade`` (random forest, Hyperband,
                      ``eta=3``), deterministic, ask and tell

and, to choose ``model_budget``, ``treebo_mf_highest``: ``treebo_mf`` with
``model_budget="highest"`` (only with ``--peers``; not one of the goals' peers).

``treebo_mf_continued`` is ``treebo_mf`` whose trainings continue from one
budget to the next (``minimize_multifidelity(problem.continue_training, ...,
checkpoint_dir=<a temporary directory>)``), charged only the budget beyond a
configuration's previous evaluation, as Optuna is. It runs on the problems
that can continue (``problem.continuable``: not the SVC, whose budget is its
data) and is shown beside the others; the goals are counted for it too.

Budget accounting: an evaluation at budget ``b`` costs ``b`` (the problems
train from scratch). An Optuna trial is charged only the highest budget it
reached, as if its training continued from one rung to the next (how a
pruned training loop spends), which favours Optuna: its evaluations at the
lower rungs are free. A run stops before the evaluation that would take it
past ``total_budget`` (Optuna's last trial may end past it; evaluations past
the budget are not counted by the summary).

Record fields: ``key``, ``problem``, ``peer``, ``seed``, ``total_budget``,
``min_budget``, ``max_budget``, ``eta``, per evaluation ``budgets``,
``values`` (None for a failure), ``spent`` (cumulative, in units of
``max_budget``) and ``best_full`` (best value so far among evaluations at
``max_budget``; None before the first), ``n_evaluated``, ``settings``,
``versions``, ``started``, ``wall_time``, ``message``, ``schema``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from treebo import minimize, minimize_multifidelity
from treebo.bench import append_record, load_results, parse_seeds
from treebo.bench.records import to_jsonable, versions
from treebo.problems.multifidelity import (
    MULTIFIDELITY_PROBLEMS,
    MultiFidelityProblem,
    get_multifidelity_problem,
)
from treebo.space import Binary, Categorical, Integer, Real

#: Layout version of the records.
SCHEMA = 1

#: The total budget of every run, in units of max_budget: what full-budget minimize gets
#: as n_calls.
TOTAL_BUDGET = 24

ETA = 3

PEERS = ("treebo_mf", "hyperband_random", "treebo_full", "optuna_hyperband", "smac_mf")
#: Peers whose trainings continue from one budget to the next: only on the problems
#: that can (``problem.continuable``), and shown beside :data:`PEERS` in the tables.
CONTINUED_PEERS = ("treebo_mf_continued",)


# -- the peers -----------------------------------------------------------------------------
def run_treebo_mf(
    problem: MultiFidelityProblem,
    seed: int,
    total: float,
    random_fraction: float = 0.2,
    continued: bool = False,
    model_budget: str = "max",
) -> tuple[list, list, dict, list]:
    with tempfile.TemporaryDirectory(prefix="treebo-mf-checkpoints-") as checkpoints:
        result = minimize_multifidelity(
            problem.continue_training if continued else problem,
            problem.space,
            problem.min_budget,
            problem.max_budget,
            total,
            ETA,
            random_state=seed,
            random_fraction=random_fraction,
            checkpoint_dir=checkpoints if continued else None,
            model_budget=model_budget,
        )
    settings = {
        "call": "treebo.minimize_multifidelity",
        "eta": ETA,
        "random_fraction": random_fraction,
        "surrogate": "bwo",
    }
    if continued:
        settings["charged"] = "budget beyond the configuration's previous evaluation"
    if model_budget != "max":
        settings["model_budget"] = model_budget
    return list(result.budgets), _values(result.func_vals), settings, list(result.costs)


def run_treebo_mf_continued(
    problem: MultiFidelityProblem, seed: int, total: float
) -> tuple[list, list, dict, list]:
    return run_treebo_mf(problem, seed, total, continued=True)


def run_treebo_mf_highest(
    problem: MultiFidelityProblem, seed: int, total: float
) -> tuple[list, list, dict, list]:
    return run_treebo_mf(problem, seed, total, model_budget="highest")


def run_hyperband_random(
    problem: MultiFidelityProblem, seed: int, total: float
) -> tuple[list, list, dict]:
    budgets, values, settings, _ = run_treebo_mf(problem, seed, total, random_fraction=1.0)
    return budgets, values, {**settings, "surrogate": None}


def run_treebo_full(
    problem: MultiFidelityProblem, seed: int, total: float
) -> tuple[list, list, dict]:
    n_calls = int(math.floor(total))
    result = minimize(problem, problem.space, n_calls=n_calls, random_state=seed)
    return (
        [problem.max_budget] * len(result.func_vals),
        _values(result.func_vals),
        {"call": "treebo.minimize", "n_calls": n_calls},
    )


def run_optuna_hyperband(
    problem: MultiFidelityProblem, seed: int, total: float
) -> tuple[list, list, dict]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    steps = _rung_steps(problem)
    study = optuna.create_study(
        sampler=optuna.samplers.TPESampler(seed=seed),
        pruner=optuna.pruners.HyperbandPruner(
            min_resource=1, max_resource=steps[-1][0], reduction_factor=ETA
        ),
    )
    distributions = _optuna_distributions(problem)
    budgets, values, spent, cap = [], [], 0.0, total * problem.max_budget
    while spent < cap * (1 - 1e-12):
        trial = study.ask(distributions)
        x = {name: trial.params[name] for name in problem.space.names}
        x = _from_library(problem, x)
        value = None
        for step, budget in steps:
            value = _safe(problem, x, budget)
            trial.report(value if value is not None else 1e300, step)
            reached = budget
            if trial.should_prune():
                study.tell(trial, state=optuna.trial.TrialState.PRUNED)
                break
        else:
            study.tell(
                trial,
                value if value is not None else None,
                state=(
                    optuna.trial.TrialState.COMPLETE
                    if value is not None
                    else optuna.trial.TrialState.FAIL
                ),
            )
        budgets.append(reached)
        values.append(value)
        spent += reached
    return (
        budgets,
        values,
        {
            "call": "optuna TPESampler + HyperbandPruner, ask and tell",
            "min_resource": 1,
            "max_resource": steps[-1][0],
            "reduction_factor": ETA,
            "charged": "highest budget reached",
        },
    )


def run_smac_mf(problem: MultiFidelityProblem, seed: int, total: float) -> tuple[list, list, dict]:
    from smac import MultiFidelityFacade as MF
    from smac import Scenario
    from smac.runhistory.dataclasses import TrialValue

    workdir = Path(tempfile.mkdtemp(prefix="treebo-mf-smac-"))
    budgets, values, spent, cap = [], [], 0.0, total * problem.max_budget
    integer = isinstance(problem.max_budget, int)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scenario = Scenario(
                _configspace(problem, seed),
                deterministic=True,
                n_trials=100_000,
                min_budget=problem.min_budget,
                max_budget=problem.max_budget,
                seed=int(seed),
                output_directory=workdir / "smac3_output",
            )
            smac = MF(
                scenario,
                _ask_and_tell_only,
                intensifier=MF.get_intensifier(scenario, eta=ETA),
                overwrite=True,
                logging_level=40,
            )
            while True:
                info = smac.ask()
                budget = int(round(info.budget)) if integer else float(info.budget)
                if spent + budget > cap * (1 + 1e-12):
                    break
                x = _from_library(problem, {n: info.config[n] for n in problem.space.names})
                value = _safe(problem, x, budget)
                smac.tell(info, TrialValue(cost=value if value is not None else 1e300))
                budgets.append(budget)
                values.append(value)
                spent += budget
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return (
        budgets,
        values,
        {
            "call": "smac.MultiFidelityFacade ask/tell",
            "eta": ETA,
            "deterministic": True,
            "intensifier": "Hyperband",
        },
    )


RUNNERS = {
    "treebo_mf": run_treebo_mf,
    "treebo_mf_continued": run_treebo_mf_continued,
    "treebo_mf_highest": run_treebo_mf_highest,
    "hyperband_random": run_hyperband_random,
    "treebo_full": run_treebo_full,
    "optuna_hyperband": run_optuna_hyperband,
    "smac_mf": run_smac_mf,
}


def _ask_and_tell_only(config: Any, seed: int = 0, budget: float = 0.0) -> float:
    raise RuntimeError("this SMAC instance is driven by ask and tell")


def _values(func_vals: Any) -> list:
    return [None if not math.isfinite(v) else float(v) for v in np.asarray(func_vals, float)]


def _safe(problem: MultiFidelityProblem, x: Any, budget: Any) -> float | None:
    try:
        value = float(problem(x, budget))
    except Exception:  # noqa: BLE001 - a failed evaluation of a peer is recorded as None
        return None
    return value if math.isfinite(value) else None


def _rung_steps(problem: MultiFidelityProblem) -> list[tuple[int, Any]]:
    """(Optuna step, budget) per rung: steps count multiples of min_budget."""
    from treebo.multifidelity import rung_budgets

    integer = isinstance(problem.max_budget, int)
    return [
        (int(round(b / problem.min_budget)), b)
        for b in rung_budgets(problem.min_budget, problem.max_budget, ETA, integer)
    ]


def _optuna_distributions(problem: MultiFidelityProblem) -> dict:
    from optuna.distributions import (
        CategoricalDistribution,
        FloatDistribution,
        IntDistribution,
    )

    out = {}
    for dim in problem.space.dimensions:
        if isinstance(dim, Real):
            out[dim.name] = FloatDistribution(dim.low, dim.high, log=dim.prior == "log-uniform")
        elif isinstance(dim, Integer):
            out[dim.name] = IntDistribution(dim.low, dim.high, log=dim.prior == "log-uniform")
        elif isinstance(dim, (Binary, Categorical)):
            n = 2 if isinstance(dim, Binary) else len(dim.categories)
            out[dim.name] = CategoricalDistribution(list(range(n)))
    return out


def _configspace(problem: MultiFidelityProblem, seed: int) -> Any:
    from ConfigSpace import Categorical as CSCategorical
    from ConfigSpace import ConfigurationSpace, Float
    from ConfigSpace import Integer as CSInteger

    cs = ConfigurationSpace(seed=int(seed))
    for dim in problem.space.dimensions:
        if isinstance(dim, Real):
            cs.add(Float(dim.name, (dim.low, dim.high), log=dim.prior == "log-uniform"))
        elif isinstance(dim, Integer):
            cs.add(CSInteger(dim.name, (dim.low, dim.high), log=dim.prior == "log-uniform"))
        else:
            n = 2 if isinstance(dim, Binary) else len(dim.categories)
            cs.add(CSCategorical(dim.name, list(range(n))))
    return cs


def _from_library(problem: MultiFidelityProblem, values: dict) -> Any:
    """A treebo point from a library's name -> value (category indices for categoricals)."""
    point = []
    for dim in problem.space.dimensions:
        v = values[dim.name]
        if isinstance(dim, Categorical):
            v = dim.categories[int(v)]
        elif isinstance(dim, (Integer, Binary)):
            v = int(v)
        else:
            v = float(v)
        point.append(v)
    return (
        dict(zip(problem.space.names, point))
        if problem.space.to_dict()["points_are_dicts"]
        else point
    )


# -- records -------------------------------------------------------------------------------
def run_key(problem: str, peer: str, seed: int, total: float) -> str:
    return f"{problem}|{peer}|seed={seed}|total_budget={total:g}|eta={ETA}"


def build_record(
    problem: MultiFidelityProblem,
    peer: str,
    seed: int,
    total: float,
    budgets: list,
    values: list,
    settings: dict,
    started: str,
    wall_time: float,
    costs: list | None = None,
) -> dict:
    charged = budgets if costs is None else costs
    spent = np.cumsum(np.asarray(charged, float)) / float(problem.max_budget)
    best, best_full = math.inf, []
    for b, v in zip(budgets, values):
        if v is not None and b == problem.max_budget:
            best = min(best, v)
        best_full.append(None if math.isinf(best) else best)
    return to_jsonable(
        {
            "schema": SCHEMA,
            "key": run_key(problem.name, peer, seed, total),
            "problem": problem.name,
            "peer": peer,
            "seed": int(seed),
            "total_budget": total,
            "min_budget": problem.min_budget,
            "max_budget": problem.max_budget,
            "eta": ETA,
            "optimal_value": problem.optimal_value,
            "budgets": budgets,
            "values": values,
            "spent": spent.tolist(),
            "best_full": best_full,
            "n_evaluated": len(values),
            "settings": settings,
            "versions": versions(),
            "started": started,
            "wall_time": wall_time,
            "message": "",
        }
    )


def run_grid(
    problems: list[str], peers: list[str], seeds: list[int], total: float, out: Path
) -> None:
    done = set()
    if out.exists():
        done = {r.get("key") for r in load_results(out)}
    for seed in seeds:
        for name in problems:
            for peer in peers:
                key = run_key(name, peer, seed, total)
                if key in done:
                    continue
                problem = get_multifidelity_problem(name)
                if peer in CONTINUED_PEERS and not problem.continuable:
                    continue
                started = datetime.datetime.now(datetime.UTC).isoformat()
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    budgets, values, settings, *costs = RUNNERS[peer](problem, seed, total)
                wall = time.perf_counter() - start
                append_record(
                    out,
                    build_record(
                        problem,
                        peer,
                        seed,
                        total,
                        budgets,
                        values,
                        settings,
                        started,
                        wall,
                        costs[0] if costs else None,
                    ),
                )
                print(
                    f"{name:<16} {peer:<18} seed {seed}: {len(values)} evaluations, {wall:.1f} s",
                    flush=True,
                )


# -- summary -------------------------------------------------------------------------------
def best_at(record: dict, fraction: float) -> float | None:
    """Best full-budget value among the evaluations within ``fraction`` of the total budget."""
    limit = fraction * record["total_budget"] * (1 + 1e-9)
    best = None
    for spent, value in zip(record["spent"], record["best_full"]):
        if spent > limit:
            break
        best = value
    return best


def summary(records: list[dict]) -> dict:
    """problem -> peer -> {"third": median, "all": median, "n": seeds}; and the goals.

    Only the seeds every peer of :data:`PEERS` has run on a problem count (a grid
    still running would otherwise compare medians over different seeds); the
    goals compare the peers of :data:`PEERS` only.
    """
    records = [r for r in records if "peer" in r]
    seeds: dict[str, set] = {}
    for problem in {r["problem"] for r in records}:
        per_peer = [
            {r["seed"] for r in records if r["problem"] == problem and r["peer"] == peer}
            for peer in PEERS
        ]
        seeds[problem] = set.intersection(*per_peer)
    table: dict[str, dict[str, dict]] = {}
    for record in records:
        if record["seed"] not in seeds[record["problem"]]:
            continue
        cell = table.setdefault(record["problem"], {}).setdefault(
            record["peer"], {"third": [], "all": [], "seeds": []}
        )
        if record["seed"] in cell["seeds"]:
            continue
        cell["seeds"].append(record["seed"])
        for name, fraction in (("third", 1 / 3), ("all", 1.0)):
            value = best_at(record, fraction)
            cell[name].append(math.inf if value is None else value)
    out: dict[str, Any] = {"problems": {}}
    for problem, peers in sorted(table.items()):
        out["problems"][problem] = {
            peer: {
                "third": statistics.median(c["third"]),
                "all": statistics.median(c["all"]),
                "n": len(c["seeds"]),
            }
            for peer, c in peers.items()
        }
    out["goals"] = {ours: _goals(out["problems"], ours) for ours in ("treebo_mf", *CONTINUED_PEERS)}
    return out


def _goals(rows: dict[str, dict], ours: str) -> dict[str, int]:
    """The issue's goal counts for the peer ``ours``, against the other peers of :data:`PEERS`."""
    reach, best_third, best_all, n = 0, 0, 0, 0
    for row in rows.values():
        if ours not in row:
            continue
        n += 1
        if "treebo_full" in row:
            reach += row[ours]["third"] <= row["treebo_full"]["all"]
        others = [r for peer, r in row.items() if peer in PEERS and peer != ours]
        best_third += all(row[ours]["third"] <= r["third"] for r in others)
        best_all += all(row[ours]["all"] <= r["all"] for r in others)
    return {
        "n_problems": n,
        "at_third_reaches_full_minimize_final": reach,
        "best_median_at_third": best_third,
        "best_median_at_all": best_all,
    }


def format_summary(table: dict) -> str:
    lines = []
    for problem, row in table["problems"].items():
        lines.append(f"{problem}")
        for peer in [*PEERS, *sorted(set(row) - set(PEERS))]:
            if peer in row:
                cell = row[peer]
                lines.append(
                    f"  {peer:<18} 1/3: {_shown(cell['third']):>12}   all: "
                    f"{_shown(cell['all']):>12}   seeds: {cell['n']}"
                )
    for ours, goals in table["goals"].items():
        if not goals["n_problems"]:
            continue
        lines.append(
            f"{ours} at 1/3 of the budget reaches full-budget minimize's median final "
            f"value on {goals['at_third_reaches_full_minimize_final']} of "
            f"{goals['n_problems']} problems; it has the best median at 1/3 on "
            f"{goals['best_median_at_third']}, at all of the budget on "
            f"{goals['best_median_at_all']}"
        )
    return "\n".join(lines)


def format_markdown(table: dict) -> str:
    """Two markdown tables (at 1/3 and at all of the budget): problems x peers, best in bold."""
    out = []
    columns = [*PEERS, *CONTINUED_PEERS]
    for name, title in (("third", "one third"), ("all", "all")):
        out.append(f"Median best full-budget value at {title} of the total budget:\n")
        out.append("| problem | seeds | " + " | ".join(f"`{p}`" for p in columns) + " |")
        out.append("|---|---|" + "---|" * len(columns))
        for problem, row in table["problems"].items():
            values = [row[p][name] if p in row else math.inf for p in columns]
            best = min(values)
            cells = [
                "n/a" if p not in row else f"**{_shown(v)}**" if v == best else _shown(v)
                for p, v in zip(columns, values)
            ]
            n = min(row[p]["n"] for p in PEERS if p in row)
            out.append(f"| `{problem}` | {n} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def alternatives_markdown(records: list[dict], alternatives: list[dict]) -> str:
    """A markdown table: ``treebo_mf`` against the proposers of ``alternatives``.

    Per problem and proposer, the median best full-budget value at one third
    and at all of the budget, over the seeds both ran, and on how many seeds
    the alternative ended lower / higher than ``treebo_mf`` at all of the budget.
    """
    ours = {(r["problem"], r["seed"]): r for r in records if r.get("peer") == "treebo_mf"}
    names = sorted({r["peer"] for r in alternatives})
    out = [
        "| problem | `treebo_mf` | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    for problem in sorted({r["problem"] for r in alternatives}):
        cells = []
        base = None
        for name in names:
            runs = [r for r in alternatives if r["problem"] == problem and r["peer"] == name]
            pairs = [(ours[problem, r["seed"]], r) for r in runs if (problem, r["seed"]) in ours]
            if not pairs:
                cells.append("n/a")
                continue
            mine = [a for a, _ in pairs]
            theirs = [b for _, b in pairs]
            if base is None or len(mine) > len(base):
                base = mine
            lower = sum(best_at(b, 1.0) < best_at(a, 1.0) for a, b in pairs)
            higher = sum(best_at(b, 1.0) > best_at(a, 1.0) for a, b in pairs)
            cells.append(
                f"{_shown(_median_at(theirs, 1 / 3))} / {_shown(_median_at(theirs, 1.0))} "
                f"(lower on {lower}, higher on {higher} of {len(pairs)})"
            )
        assert base is not None
        mine_cell = f"{_shown(_median_at(base, 1 / 3))} / {_shown(_median_at(base, 1.0))}"
        out.append(f"| `{problem}` | {mine_cell} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _median_at(records: list[dict], fraction: float) -> float:
    values = [best_at(r, fraction) for r in records]
    return statistics.median(math.inf if v is None else v for v in values)


def _shown(value: float) -> str:
    return "none" if math.isinf(value) else f"{value:.5g}"


# -- parallel speed-up ---------------------------------------------------------------------
class _Waiting:
    """A multi-fidelity problem whose evaluation also waits, as a training does.

    An evaluation at ``budget`` sleeps ``seconds * budget / max_budget``
    before computing the problem's value: the time of a training that runs
    off the driver's cores (a GPU, a remote job), which workers can overlap
    however few cores the machine has.
    """

    def __init__(self, problem: Any, seconds: float):
        self.problem = problem
        self.seconds = seconds

    def __call__(self, x: Any, budget: float) -> float:
        time.sleep(self.seconds * budget / self.problem.max_budget)
        return self.problem(x, budget)


def run_speedup(
    name: str,
    workers: list[int],
    seeds: list[int],
    total: float,
    out: Path,
    seconds_per_budget: float = 0.0,
    promotion: str | None = None,
) -> None:
    """Wall time to each best full-budget value, per number of workers (one record each).

    With ``seconds_per_budget`` > 0, every evaluation also waits that many
    seconds per ``max_budget`` it trains (:class:`_Waiting`). ``promotion``
    is ``minimize_multifidelity``'s (its default when None).
    """
    done = {r.get("key") for r in load_results(out)} if out.exists() else set()
    for seed in seeds:
        for n in workers:
            key = f"{name}|workers={n}|seed={seed}|total_budget={total:g}"
            if seconds_per_budget:
                key += f"|seconds_per_budget={seconds_per_budget:g}"
            if promotion is not None and n > 1:
                key += f"|promotion={promotion}"
            if key in done:
                continue
            problem = get_multifidelity_problem(name)
            objective = _Waiting(problem, seconds_per_budget) if seconds_per_budget else problem
            trace: list[tuple[float, float]] = []
            start = time.perf_counter()

            def record_time(result: Any, trace: list = trace, start: float = start) -> None:
                trace.append((time.perf_counter() - start, result.fun))

            result = minimize_multifidelity(
                objective,
                problem.space,
                problem.min_budget,
                problem.max_budget,
                total,
                ETA,
                n_jobs=n,
                random_state=seed,
                callback=record_time,
                **({} if promotion is None else {"promotion": promotion}),
            )
            wall = time.perf_counter() - start
            append_record(
                out,
                to_jsonable(
                    {
                        "schema": SCHEMA,
                        "key": key,
                        "problem": f"speedup_{name}",
                        "workers": n,
                        "seed": seed,
                        "total_budget": total,
                        "seconds_per_budget": seconds_per_budget,
                        "promotion": promotion or "synchronous",
                        "seconds": [t for t, _ in trace],
                        "best_full": [None if math.isnan(f) else f for _, f in trace],
                        "wall_time": wall,
                        "fun": result.fun,
                        "n_evaluated": len(result.func_vals),
                        "cpu_count": os.cpu_count(),
                        "versions": versions(),
                    }
                ),
            )
            print(
                f"{name} workers {n} seed {seed}: {wall:.1f} s, best {result.fun:.5g}", flush=True
            )


def _promotion(record: dict) -> str:
    # Records made before the option existed were asynchronous with several workers.
    default = "asynchronous" if record["workers"] > 1 else "synchronous"
    return record.get("promotion") or default


def speedup_summary(records: list[dict]) -> dict:
    """Median wall time to three targets, per worker count and promotion.

    Records are grouped by problem, total budget and ``seconds_per_budget``
    (0 when absent); each group has its own targets and its own entry, keyed
    ``"<problem> total=<T> seconds_per_budget=<S>"``. The targets come from
    the 1-worker runs: ``"1/4"``, ``"1/2"`` and ``"3/4"``, the median of their
    best values at that fraction of their wall time (a median over runs, so
    about half of the 1-worker runs reach each target by then). A run that
    never reaches a target counts as infinitely long for it.
    """
    groups: dict[str, list[dict]] = {}
    for r in records:
        if "workers" in r:
            label = (
                f"{r['problem']} total={r['total_budget']:g} "
                f"seconds_per_budget={r.get('seconds_per_budget', 0.0):g}"
            )
            groups.setdefault(label, []).append(r)
    out: dict = {}
    for label, group in groups.items():
        single = [r for r in group if r["workers"] == 1]
        if not single:
            continue
        targets = {
            name: statistics.median(_best_at_time(r, r["wall_time"] * fraction) for r in single)
            for name, fraction in (("1/4", 0.25), ("1/2", 0.5), ("3/4", 0.75))
        }
        entry: dict = {"targets": targets}
        # One entry per worker count and promotion (1 worker: successive halving).
        for n, promotion in sorted({(r["workers"], _promotion(r)) for r in group}):
            runs = [r for r in group if r["workers"] == n and _promotion(r) == promotion]
            cell: dict = {"median_wall_time": statistics.median(r["wall_time"] for r in runs)}
            for name, target in targets.items():
                times = [_time_to(r, target) for r in runs]
                cell[f"median_seconds_to_{name}"] = statistics.median(times)
                cell[f"reached_{name}"] = sum(not math.isinf(t) for t in times)
                # How many times faster than one worker (0 if never reached).
                alone = statistics.median(_time_to(r, target) for r in single)
                cell[f"speedup_{name}"] = alone / cell[f"median_seconds_to_{name}"]
            cell["runs"] = len(runs)
            entry[str(n) if n == 1 else f"{n} {promotion}"] = cell
        out[label] = entry
    return out


def _time_to(record: dict, target: float) -> float:
    """Seconds until the run's best full-budget value is at most ``target`` (inf if never)."""
    return next(
        (
            t
            for t, f in zip(record["seconds"], record["best_full"])
            if f is not None and f <= target
        ),
        math.inf,
    )


def _best_at_time(record: dict, seconds: float) -> float:
    """The run's best full-budget value after ``seconds`` (inf before the first)."""
    best = math.inf
    for t, f in zip(record["seconds"], record["best_full"]):
        if t > seconds:
            break
        if f is not None:
            best = f
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", nargs="+", default=sorted(MULTIFIDELITY_PROBLEMS))
    parser.add_argument("--peers", nargs="+", default=list(PEERS), choices=sorted(RUNNERS))
    parser.add_argument("--seeds", nargs="+", default=["0-9"])
    parser.add_argument("--total-budget", type=float, default=TOTAL_BUDGET)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/multifidelity"))
    parser.add_argument("--summary", type=Path, help="print the goal figures of these records")
    parser.add_argument(
        "--speedup",
        metavar="PROBLEM",
        help="time the workers of --workers on PROBLEM instead of running the grid",
    )
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument(
        "--promotion",
        choices=["synchronous", "asynchronous"],
        help="with --speedup: minimize_multifidelity's promotion (its default if not given)",
    )
    parser.add_argument(
        "--seconds-per-budget",
        type=float,
        default=0.0,
        help="with --speedup: every evaluation also sleeps this many seconds per "
        "max_budget it trains, a training that runs off the driver's cores",
    )
    parser.add_argument(
        "--markdown",
        action="store_true",
        help="with --summary: print markdown tables for the docs page",
    )
    parser.add_argument(
        "--speedup-summary",
        type=Path,
        metavar="DIR",
        help="print the speed-up figures of the records in DIR",
    )
    parser.add_argument(
        "--alternatives",
        type=Path,
        metavar="DIR",
        help="with --summary: compare treebo_mf with the proposers recorded in DIR",
    )
    args = parser.parse_args(argv)
    if args.speedup_summary is not None:
        print(json.dumps(speedup_summary(load_results(args.speedup_summary)), indent=1))
        return 0
    if args.summary is not None:
        records = load_results(args.summary)
        if args.alternatives is not None:
            print(alternatives_markdown(records, load_results(args.alternatives)))
            return 0
        table = summary(records)
        print(format_markdown(table) if args.markdown else format_summary(table))
        speed = (
            load_results(args.summary / "speedup") if (args.summary / "speedup").exists() else []
        )
        if speed:
            print("speed-up:", json.dumps(speedup_summary(speed), indent=1))
        return 0
    seeds = parse_seeds(args.seeds)
    if args.speedup:
        run_speedup(
            args.speedup,
            args.workers,
            seeds,
            args.total_budget,
            args.out,
            args.seconds_per_budget,
            args.promotion,
        )
        return 0
    unknown = sorted(set(args.problems) - set(MULTIFIDELITY_PROBLEMS))
    if unknown:
        parser.error(f"unknown problems {unknown}; known: {sorted(MULTIFIDELITY_PROBLEMS)}")
    run_grid(args.problems, args.peers, seeds, args.total_budget, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

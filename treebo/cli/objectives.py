"""What ``treebo minimize``, ``tell`` and ``show`` print for a study with ``--objective``.

A study made with ``--objective NAME:min|max`` (and ``--constraint``) records
a dict of metrics per trial. For several objectives there is no single best
trial: the commands print the Pareto front of the feasible trials (those that
no other feasible trial beats in every objective), and how many trials were
feasible; for one objective under constraints, the best feasible trial.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .usage import format_table, given_settings

if TYPE_CHECKING:
    from ..result import OptimizeResult

__all__ = ["metric_names", "print_result", "show", "cell"]

#: Points of a Pareto front that ``treebo minimize`` prints (``treebo show`` lists them all).
FRONT_LINES = 20


def metric_names(args: argparse.Namespace) -> list[str] | None:
    """The metrics a command must print with ``--objective``.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed arguments of ``treebo minimize``.

    Returns
    -------
    list of str or None
        The objectives, then the other constrained metrics; None without
        ``--objective`` (the command prints a number).

    Raises
    ------
    ValueError
        For an objective or a constraint that is not allowed.
    """
    from ..metrics import Metrics, check_objectives

    settings = given_settings(args)
    objectives = check_objectives(settings.get("objectives"), "--objective")
    if objectives is None:
        return None
    return list(Metrics(objectives, settings.get("constraints")).needed)


def print_result(result: OptimizeResult) -> None:
    """The end of ``treebo minimize`` for a study with objectives.

    The Pareto front of several objectives (the first :data:`FRONT_LINES`
    points), or the best feasible point of one, and how many evaluations
    were feasible.

    Parameters
    ----------
    result : OptimizeResult
        With the fields of :meth:`treebo.metrics.Metrics.result_fields` and
        an ``x`` (some evaluation was complete).
    """
    from ..shared_study import jsonable

    n = len(result.x_iters)
    feasible = f"{result.n_feasible} of {n} evaluations feasible"
    names = result.objectives
    if len(names) > 1:
        front = result.pareto_front
        print(f"Pareto front: {_points(len(front))}; {feasible}")
        for row, k, x in list(zip(front, result.pareto_index, result.pareto_x))[:FRONT_LINES]:
            shown = ", ".join(f"{name}={value:.6g}" for name, value in zip(names, row))
            print(f"  evaluation {k + 1}: {shown}; x = {json.dumps(jsonable(x))}")
        if len(front) > FRONT_LINES:
            print(f"  ... and {len(front) - FRONT_LINES} more (treebo show lists them all)")
        if not len(front):
            print(f"no feasible point; x = {json.dumps(jsonable(result.x))} violates least")
        return
    index = next((k for k, x in enumerate(result.x_iters) if x is result.x), -1)
    if result.n_feasible:
        what = "best feasible value" if result.constraints else "best value"
        print(f"{what} {result.fun:.10g} of {names[0]} at evaluation {index + 1}; {feasible}")
    else:
        print(
            f"no feasible point in {n} evaluations; the least violation is at evaluation "
            f"{index + 1} ({names[0]} {result.fun:.10g})"
        )
    print(f"x = {json.dumps(jsonable(result.x))}")


def show(path: str, settings: dict, rows: list[dict], names: Sequence[str]) -> None:
    """``treebo show`` of a study with objectives.

    Prints the objectives and constraints, how many told trials were
    feasible, the Pareto front of the feasible trials as a table (trial,
    each objective, the point) for several objectives or the best feasible
    trial for one, then every trial with its metrics.

    Parameters
    ----------
    path : str
        The storage, as the user named it.
    settings : dict
        The study's settings (:func:`treebo.settings.settings_from_store`),
        with ``objectives``.
    rows : list of dict
        Its trials (:func:`treebo.shared_study.read_shared`).
    names : sequence of str
        The dimensions.
    """
    from ..metrics import Metrics

    metrics = Metrics(settings["objectives"], settings["constraints"])
    told = [r for r in rows if r["status"] != "pending"]
    # Positions for points: the result's x is then the position of its trial.
    fields = metrics.result_fields([r["metrics"] for r in told], list(range(len(told))))
    counts = {s: sum(r["status"] == s for r in rows) for s in ("complete", "failed", "pending")}
    directions = ", ".join(f"{n} ({d})" for n, d in metrics.directions.items())
    print(
        f"study {path}: {len(rows)} trials ({counts['complete']} complete, "
        f"{counts['failed']} failed, {counts['pending']} pending); "
        f"{'objectives' if metrics.n_objectives > 1 else 'objective'} {directions}; "
        f"surrogate {settings['surrogate']}"
    )
    if metrics.constraints:
        print(
            f"constraints: {', '.join(fields['constraints'])}; {fields['n_feasible']} of "
            f"{len(told)} evaluated trials feasible"
        )
    front = [told[k]["number"] for k in fields["pareto_index"]]
    if metrics.n_objectives > 1:
        if front:
            print(
                f"Pareto front: {_points(len(front))} (feasible trials that no other one "
                "beats in every objective)"
            )
            print(_indented(_front_table(rows, front, metrics.names, names)))
        else:
            print("Pareto front: none (no complete feasible trial)")
    elif fields["x"] is None:
        print("best: none (no complete trial)")
    else:
        best = told[fields["x"]]
        shown = ", ".join(f"{k}={cell(v)}" for k, v in (best["x"] or {}).items())
        what = "best feasible" if metrics.constraints else "best"
        if not fields["n_feasible"]:
            print(f"{what}: none (no evaluated trial meets every constraint)")
            what = "least total violation"
        print(f"{what}: trial {best['number']}, {metrics.names[0]} {fields['fun']:.10g} at {shown}")
    feasible = dict(zip((r["number"] for r in told), fields["feasible"]))
    print(_trial_table(rows, metrics, names, feasible, set(front)))


def cell(value: Any) -> str:
    """A value as a table shows it: floats with 6 significant digits."""
    if isinstance(value, float):
        return f"{value:.6g}" if math.isfinite(value) else str(value)
    return str(value)


def _points(n: int) -> str:
    return f"{n} point" if n == 1 else f"{n} points"


def _indented(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def _front_table(
    rows: list[dict], front: list[int], objectives: Sequence[str], names: Sequence[str]
) -> str:
    by_number = {r["number"]: r for r in rows}
    body = []
    for number in front:
        row = by_number[number]
        x = row["x"] or {}
        body.append(
            [
                str(number),
                *[cell(row["metrics"][o]) for o in objectives],
                *[cell(x[n]) if n in x else "" for n in names],
            ]
        )
    return format_table(["trial", *objectives, *names], body)


def _trial_table(
    rows: list[dict], metrics: Any, names: Sequence[str], feasible: dict, front: set
) -> str:
    """Every trial: its objectives and constrained metrics, feasibility, front membership."""
    shown = list(dict.fromkeys([*metrics.names, *(c.metric for c in metrics.constraints)]))
    header = ["trial", "status", *shown]
    header += ["feasible"] if metrics.constraints else []
    header += ["front"] if metrics.n_objectives > 1 else []
    header += [*names, "failure"]
    body = []
    for row in rows:
        x = row["x"] or {}
        values = row["metrics"] or {}
        error = (row["error"] or "").splitlines()
        cells = [str(row["number"]), row["status"]]
        cells += [cell(values[m]) if m in values else "" for m in shown]
        if metrics.constraints:
            complete = row["status"] == "complete"
            cells.append(("yes" if feasible.get(row["number"]) else "no") if complete else "")
        if metrics.n_objectives > 1:
            cells.append("*" if row["number"] in front else "")
        cells += [cell(x[n]) if n in x else "" for n in names]
        cells.append(error[0][:60] if error else "")
        body.append(cells)
    return format_table(header, body)

"""What a grid's records show: regret curves, summary tables and their Markdown.

Records (:func:`~treebo.bench.load_results`) are grouped by problem,
surrogate and preset into :class:`Curves` in the paper's layout, from which
:func:`summary_table` takes the median final result per problem and surrogate
and :func:`paired_wins` compares two surrogates seed by seed;
:func:`format_summary` and :func:`format_paired` write those as Markdown
tables (``treebo summary``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .presets import N_INITIAL
from .spec import run_key

__all__ = [
    "surrogate_order",
    "Curves",
    "regret_curves",
    "summary_table",
    "paired_wins",
    "format_summary",
    "format_paired",
]


def surrogate_order(names: Iterable[str]) -> list[str]:
    """Distinct surrogate names in registry order (unregistered ones last, as met).

    Parameters
    ----------
    names : iterable of str
        Surrogate names, repeats allowed.

    Returns
    -------
    list of str
        Each name once.
    """
    from ..surrogates import available_surrogates

    names = list(dict.fromkeys(names))
    registry = [n for n in available_surrogates() if n in names]
    return registry + [n for n in names if n not in registry]


def _floor(f_star: float | None, protocol_floor: float | None = None) -> float:
    """The lowest regret a curve shows, so that a run which hit the optimum has a finite log10.

    A record's ``regret_floor`` (its protocol's, e.g. 1e-8 for bbob) raises it.
    """
    floor = max(1e-12, 1e-12 * abs(f_star)) if f_star is not None else 0.0
    return max(floor, protocol_floor) if protocol_floor is not None else floor


def _latest(records: Iterable[dict]) -> list[dict]:
    """One record per run key: the one with the most evaluations."""
    best: dict[str, dict] = {}
    for record in records:
        key = record.get("key") or run_key(
            record["problem"],
            record.get("problem_params", {}),
            record["surrogate"],
            record["seed"],
            record.get("preset", "default"),
            record.get("overrides", {}),
        )
        if key not in best or record["n_evaluated"] > best[key]["n_evaluated"]:
            best[key] = record
    return list(best.values())


@dataclass
class Curves:
    """Curves of one (problem, surrogate, preset) over seeds.

    Parameters
    ----------
    problem, surrogate, preset : str
        What the records of the curves ran.
    seeds : list of int
    kind : {"regret", "value"}
        ``"regret"``: best-so-far regret against the known optimum (the
        paper's best instantaneous regret); ``"value"``: best-so-far objective
        value, for problems whose optimum is unknown (AutoML).
    curves : ndarray of shape (n_seeds, T + 1)
        Column 0 is the best over the initial design, column t the best after
        BO iteration t (the paper's layout). Regrets are floored at
        ``max(1e-12, 1e-12 |f*|)`` so their log10 is finite, or at the
        records' ``regret_floor`` where that is higher (1e-8 for bbob: the
        log10 precision is clipped at -8).
    iteration_time : ndarray of shape (n_seeds, T)
        Fit plus acquisition seconds of BO iterations 1..T.
    n_initial : int
        Points of the initial design (column 0 is their best).
    """

    problem: str
    surrogate: str
    preset: str
    seeds: list
    kind: str
    curves: np.ndarray
    iteration_time: np.ndarray
    n_initial: int = N_INITIAL

    @property
    def log10(self) -> np.ndarray:
        """``log10`` of the curves (regret kind only)."""
        return np.log10(self.curves)


def regret_curves(records: Iterable[dict], n_calls: int | None = None) -> list[Curves]:
    """Group records by (problem, surrogate, preset) into :class:`Curves`.

    Parameters
    ----------
    records : iterable of dict
        As written by :func:`run_grid` (duplicates of a run: the longest wins).
    n_calls : int, optional
        Cut every run to this many evaluations; by default the shortest run of
        each group sets the length.

    Returns
    -------
    list of Curves
        One per (problem, surrogate, preset), sorted by that triple; the seeds
        of each are in increasing order.

    Raises
    ------
    ValueError
        If a group holds several runs of one seed (other problem parameters
        or overrides), or ``n_calls`` is smaller than the initial design.
    """
    groups: dict[tuple, list[dict]] = {}
    for record in _latest(records):
        groups.setdefault(
            (record["problem"], record["surrogate"], record.get("preset", "default")), []
        ).append(record)
    out = []
    for (problem, surrogate, preset), group in sorted(groups.items()):
        group.sort(key=lambda r: r["seed"])
        seeds = [r["seed"] for r in group]
        if len(set(seeds)) < len(seeds):
            # Runs of one seed with other problem parameters or overrides
            # (e.g. two values of lam) must not be pooled into one curve.
            raise ValueError(
                f"the records hold several runs of {problem} with {surrogate} "
                f"({preset}) for one seed, with different problem parameters or "
                "overrides; keep each experiment in its own results directory"
            )
        n = min(r["n_evaluated"] for r in group)
        if n_calls is not None:
            n = min(n, int(n_calls))
        n0 = group[0].get("n_initial", N_INITIAL)
        if n < n0:
            raise ValueError(
                f"n_calls must be at least the {n0} initial points, got {n} "
                f"for {problem} with {surrogate}"
            )
        known = all(r.get("regret") is not None for r in group)
        rows, times = [], []
        for r in group:
            series = r["regret"] if known else r["best_so_far"]
            series = [math.nan if v is None else v for v in series[n0 - 1 : n]]
            if known:
                floor = _floor(r.get("optimal_value"), r.get("regret_floor"))
                series = [max(v, floor) if math.isfinite(v) else v for v in series]
            rows.append(series)
            times.append([f + a for f, a in zip(r["fit_time"][n0:n], r["acq_time"][n0:n])])
        out.append(
            Curves(
                problem,
                surrogate,
                preset,
                [r["seed"] for r in group],
                "regret" if known else "value",
                np.array(rows, dtype=float),
                np.array(times, dtype=float),
                n0,
            )
        )
    return out


def _named_rows(curves: list[Curves]) -> list[tuple[str, Curves]]:
    """Each curve with its table row name: the problem, plus the preset when several are mixed."""
    several = len({c.preset for c in curves}) > 1
    return [(f"{c.problem} ({c.preset})" if several else c.problem, c) for c in curves]


def summary_table(records: Iterable[dict], n_calls: int | None = None) -> dict[str, dict]:
    """Median final result per problem and surrogate.

    Parameters
    ----------
    records : iterable of dict
        As written by :func:`run_grid`.
    n_calls : int, optional
        Cut every run to this many evaluations (see :func:`regret_curves`).

    Returns
    -------
    dict
        ``{problem: {"kind": "regret" | "value", "n_seeds": {surrogate: n},
        "n_calls": {surrogate: c}, "median": {surrogate: m}, "best": [surrogate, ...]}}``
        where ``c`` is the evaluations per run the curves were cut to, ``m``
        the median over seeds (NaNs ignored) of the final log10 best-so-far
        regret (kind ``"regret"``) or of the final best value (kind
        ``"value"``), and ``best`` the surrogates with the lowest median
        (several on a tie). Groups with several presets are keyed
        ``"problem (preset)"``.
    """
    curves = regret_curves(records, n_calls)
    table: dict[str, dict] = {}
    for name, c in _named_rows(curves):
        row = table.setdefault(name, {"kind": c.kind, "median": {}, "n_seeds": {}, "n_calls": {}})
        final = c.curves[:, -1]
        final = np.log10(final) if c.kind == "regret" else final
        row["median"][c.surrogate] = float(np.nanmedian(final))
        row["n_seeds"][c.surrogate] = len(c.seeds)
        row["n_calls"][c.surrogate] = c.curves.shape[1] - 1 + c.n_initial
    for row in table.values():
        lowest = min(row["median"].values())
        row["best"] = [s for s, m in row["median"].items() if m == lowest]
    return table


def paired_wins(
    records: Iterable[dict], surrogate: str, n_calls: int | None = None
) -> dict[str, dict[str, tuple[int, int, int]]]:
    """Seed-by-seed comparison of one surrogate with every other, per problem.

    Runs of one seed share their initial design, so comparing the final
    results seed by seed removes the luck of the start that the medians of
    :func:`summary_table` keep.

    Parameters
    ----------
    records : iterable of dict
        As written by :func:`run_grid`.
    surrogate : str
        The surrogate to compare with the others.
    n_calls : int, optional
        Cut every run to this many evaluations (see :func:`regret_curves`).

    Returns
    -------
    dict
        ``{problem: {other: (wins, ties, n)}}`` over the ``n`` seeds both
        surrogates have run: ``wins`` counts the seeds where ``surrogate``'s
        final best regret (or best value) is strictly lower, ``ties`` those
        where the two are equal (e.g. both at the regret floor). Problems
        where ``surrogate`` has no runs are left out; keys as in
        :func:`summary_table`.

    Raises
    ------
    ValueError
        If no record holds a run of ``surrogate``.
    """
    curves = regret_curves(records, n_calls)
    if not any(c.surrogate == surrogate for c in curves):
        raise ValueError(
            f"no runs of {surrogate!r}; recorded: {surrogate_order(c.surrogate for c in curves)}"
        )
    finals: dict[str, dict[str, dict[int, float]]] = {}
    for name, c in _named_rows(curves):
        finals.setdefault(name, {})[c.surrogate] = dict(zip(c.seeds, c.curves[:, -1]))
    out: dict[str, dict[str, tuple[int, int, int]]] = {}
    for name, by_surrogate in finals.items():
        mine = by_surrogate.get(surrogate)
        if mine is None:
            continue
        row = out.setdefault(name, {})
        for other in surrogate_order(by_surrogate):
            if other == surrogate:
                continue
            theirs = by_surrogate[other]
            common = [seed for seed in mine if seed in theirs]
            wins = sum(int(mine[seed] < theirs[seed]) for seed in common)
            ties = sum(int(mine[seed] == theirs[seed]) for seed in common)
            row[other] = (wins, ties, len(common))
    return out


def format_paired(table: dict[str, dict[str, tuple[int, int, int]]], surrogate: str) -> str:
    """A Markdown table of :func:`paired_wins`.

    Parameters
    ----------
    table : dict
        As returned by :func:`paired_wins`.
    surrogate : str
        The surrogate the table compares (for the header).

    Returns
    -------
    str
        One row per problem, one column per other surrogate; a cell
        ``wins/n`` (``wins+ties/n`` with ties, e.g. ``3+1/5``), ``–`` where
        the two share no seed. No trailing newline.
    """
    others = surrogate_order(o for row in table.values() for o in row)
    lines = [
        "| problem | " + " | ".join(f"{surrogate} < {o}" for o in others) + " |",
        "|---|" + "---:|" * len(others),
    ]
    for name, row in table.items():
        cells = []
        for other in others:
            wins, ties, n = row.get(other, (0, 0, 0))
            if n == 0:
                cells.append("–")
            else:
                cells.append(f"{wins}+{ties}/{n}" if ties else f"{wins}/{n}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def format_summary(table: dict[str, dict], surrogates: Sequence[str] | None = None) -> str:
    """A Markdown table of :func:`summary_table`, the best entries of each row in bold.

    Parameters
    ----------
    table : dict
        As returned by :func:`summary_table`.
    surrogates : list of str, optional
        Surrogate columns, in this order; by default every surrogate of the
        table, in :func:`surrogate_order`.

    Returns
    -------
    str
        Columns ``problem``, ``quantity`` (``log10 regret`` or ``best value``),
        ``seeds x calls`` and one per surrogate; medians to 2 decimals (regret)
        or 4 (value), ``–`` where a surrogate has no runs. No trailing newline.
    """
    if surrogates is None:
        surrogates = surrogate_order(s for row in table.values() for s in row["median"])
    header = ["problem", "quantity", "seeds x calls", *surrogates]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * 3 + "---:|" * len(surrogates)]
    for name, row in table.items():
        quantity = "log10 regret" if row["kind"] == "regret" else "best value"
        seeds = sorted(set(row["n_seeds"].values()))
        calls = sorted(set(row["n_calls"].values()))
        cells = [name, quantity, f"{'/'.join(map(str, seeds))} x {'/'.join(map(str, calls))}"]
        for s in surrogates:
            if s not in row["median"]:
                cells.append("–")
                continue
            text = (
                f"{row['median'][s]:.2f}" if row["kind"] == "regret" else f"{row['median'][s]:.4f}"
            )
            cells.append(f"**{text}**" if s in row["best"] else text)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)

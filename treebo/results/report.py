"""A study's report: one self-contained HTML page with its best trial, figures and trials.

The page holds everything it shows: the figures are PNG images embedded in
it (``data:`` URIs), there is no script and nothing is fetched from the
network, so it opens offline, can be mailed as one file and archived next
to the study. ``treebo report study.db -o report.html`` writes one from the
command line.

Needs matplotlib (``pip install 'treebo[plot]'``) for the figures.
"""

from __future__ import annotations

import base64
import html
import io
import math
import numbers
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..files import write_atomically
from ..metrics import Constraint
from ..result import OptimizeResult
from .io import as_result

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["report_html", "write_report"]

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.25em 0.6em; text-align: right; }
th { background: #f4f4f4; position: sticky; top: 0; }
td.text { text-align: left; }
tr.best td { background: #fff3c4; font-weight: 600; }
tr.failed td { color: #a33; }
figure { margin: 1em 0; } figcaption { font-size: 0.9em; color: #555; max-width: 60em; }
img { max-width: 100%; height: auto; border: 1px solid #eee; }
.note { color: #555; font-size: 0.9em; }
"""


def report_html(
    source: OptimizeResult | str | os.PathLike,
    *,
    title: str | None = None,
    max_dimensions: int = 6,
    dpi: int = 90,
    random_state: int | None = None,
) -> str:
    """The report of a study as one HTML page (a string).

    Parameters
    ----------
    source : OptimizeResult, str or os.PathLike
        A result, or the path of a storage file.
    title : str, optional
        The page's title; by default the storage file's name.
    max_dimensions : int, default 6
        The partial-dependence and evaluation figures show at most this many
        dimensions, the most important first (a grid of ``n x n`` panels
        becomes unreadable beyond that); the importance figure and the table
        show every dimension.
    dpi : int, default 90
        Resolution of the embedded figures.
    random_state : int, optional
        Seeds the surrogate refit; by default the study's seed.

    Returns
    -------
    str
        A complete HTML document.
    """
    from .._checks import check_int

    max_dimensions = check_int(max_dimensions, "max_dimensions")
    dpi = check_int(dpi, "dpi", 10)
    result = as_result(source)
    if title is None:
        title = (
            f"treebo study {os.path.basename(result['storage'])}"
            if "storage" in result
            else "treebo study"
        )
    parts = [f"<h1>{html.escape(title)}</h1>", _summary(result)]
    parts += _figures(result, max_dimensions, dpi, random_state)
    parts.append(_trial_table(result))
    stamp = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    from .. import __version__

    parts.append(
        f'<p class="note">Written by treebo {html.escape(__version__)} on {html.escape(stamp)}.</p>'
    )
    body = "\n".join(parts)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n"
        f"<body>\n{body}\n</body>\n</html>\n"
    )


def write_report(
    source: OptimizeResult | str | os.PathLike, path: str | os.PathLike, **options: Any
) -> Path:
    """Write :func:`report_html` to ``path``; returns the path.

    Parameters
    ----------
    source : OptimizeResult, str or os.PathLike
    path : str or os.PathLike
        The HTML file (its directory is created when missing). It is written
        whole or not at all (:func:`treebo.files.write_atomically`): a
        report that cannot be written leaves the previous file unchanged.
    **options
        The keyword arguments of :func:`report_html`.

    Returns
    -------
    Path

    Raises
    ------
    treebo.files.WriteError
        When the file cannot be written (no space left, a quota or
        file-size limit, no permission); it names the file and the cause.
    """
    text = report_html(source, **options)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomically(path, text)


# -- parts of the page ---------------------------------------------------------------------
def _summary(result: OptimizeResult) -> str:
    statuses = list(result.get("statuses", ["complete"] * len(result.x_iters)))
    n_complete = statuses.count("complete")
    n_failed = statuses.count("failed")
    facts = [
        ("evaluated trials", str(len(statuses))),
        ("complete", str(n_complete)),
        ("failed", str(n_failed)),
    ]
    if result.get("n_pending"):
        facts.append(("pending (asked, not told yet)", str(result["n_pending"])))
    if "objectives" in result:
        directions = zip(result["objectives"], result["directions"])
        facts.append(("objectives", ", ".join(f"{n} ({d})" for n, d in directions)))
        if result["constraints"]:
            facts.append(("constraints", ", ".join(result["constraints"])))
        facts.append(("feasible", f"{result['n_feasible']} of {len(statuses)}"))
    if result.get("surrogate"):
        facts.append(("surrogate", str(result["surrogate"])))
    if result.get("random_state") is not None:
        facts.append(("seed", str(result["random_state"])))
    rows = "".join(
        f'<tr><td class="text">{html.escape(k)}</td><td>{html.escape(v)}</td></tr>'
        for k, v in facts
    )
    out = ["<h2>Study</h2>", f"<table>{rows}</table>"]
    if "objectives" in result and len(result["objectives"]) > 1:
        out.append(_front_table(result))
        return "\n".join(out)
    feasible = "objectives" in result and result["constraints"]
    out.append("<h2>Best feasible trial</h2>" if feasible else "<h2>Best trial</h2>")
    if feasible and result.x is not None and not result["n_feasible"]:
        out.append(
            '<p class="note">No evaluated trial meets every constraint: this is the trial '
            "with the least total violation.</p>"
        )
    if result.x is None or not math.isfinite(result.fun):
        out.append('<p class="note">No trial is complete yet: there is no best value.</p>')
        return "\n".join(out)
    space = result.space
    best = _best_index(result)
    number = result.get("numbers", list(range(len(statuses))))[best]
    lines = [
        f'<tr><td class="text">value</td><td>{_cell(result.fun)}</td></tr>',
        f'<tr><td class="text">trial</td><td>{number}</td></tr>',
    ]
    for j, name in enumerate(space.names):
        value = _value_of(result.x, name, j)
        lines.append(f'<tr><td class="text">{html.escape(name)}</td><td>{_cell(value)}</td></tr>')
    out.append(f"<table>{''.join(lines)}</table>")
    return "\n".join(out)


def _figures(
    result: OptimizeResult, max_dimensions: int, dpi: int, random_state: int | None
) -> list[str]:
    from ..plotting.results import (
        plot_convergence,
        plot_evaluations,
        plot_importance,
        plot_objective,
    )
    from .inspection import fit_surrogate, parameter_importance

    values = np.asarray(result.func_vals, dtype=float)
    out = ["<h2>Figures</h2>"]
    if not np.isfinite(values).any():
        out.append('<p class="note">No trial is complete yet: there is nothing to plot.</p>')
        return out
    if "objectives" in result and len(result["objectives"]) > 1:
        return out + _front_figures(result, max_dimensions, dpi)
    constrained = "objectives" in result and result["constraints"]
    out.append(
        _figure(
            plot_convergence(result),
            "convergence",
            dpi,
            (
                "The best feasible value found so far after each evaluation (line), every "
                "feasible value (dots) and every infeasible one (grey crosses); failed "
                "evaluations have no mark."
                if constrained
                else "The best value found so far after each evaluation (line) and every "
                "evaluated value (dots); failed evaluations have no dot."
            ),
        )
    )
    model = fit_surrogate(result, random_state=random_state)
    importance = parameter_importance(result, model=model, random_state=random_state)
    out.append(
        _figure(
            plot_importance(importance),
            "parameter importance",
            dpi,
            "Each dimension's share of the main effects: the variance of the "
            "surrogate's partial dependence on that dimension alone, averaged over "
            "the others. Interactions are not counted; this describes the refitted "
            "surrogate, which is only as good as the trials it was fitted on.",
        )
    )
    names = list(importance.to_dict())[:max_dimensions]
    shown = [n for n in result.space.names if n in names]
    left_out = result.space.n_dims - len(shown)
    note = (
        f" The {len(shown)} most important of {result.space.n_dims} dimensions are shown."
        if left_out
        else ""
    )
    out.append(
        _figure(
            plot_objective(result, dimensions=shown, model=model, random_state=random_state),
            "partial dependence",
            dpi,
            "The surrogate's mean prediction as one dimension (diagonal) or two "
            "(below it) change, averaged over all the others; the red star and "
            f"dashed lines mark the best trial, black dots the evaluations.{note}",
        )
    )
    out.append(
        _figure(
            plot_evaluations(result, dimensions=shown),
            "evaluations",
            dpi,
            "Where the evaluations went: histograms per dimension and the pairs, "
            f"coloured by evaluation number (dark: early).{note}",
        )
    )
    return out


def _front_figures(result: OptimizeResult, max_dimensions: int, dpi: int) -> list[str]:
    """The figures of several objectives: the front, the hypervolume, the evaluations."""
    from ..plotting.pareto import plot_hypervolume, plot_pareto_front
    from ..plotting.results import plot_evaluations

    pairs = len(result["objectives"]) > 2
    out = [
        _figure(
            plot_pareto_front(result),
            "pareto front",
            dpi,
            (
                "Each pair of objectives: every complete evaluation, feasible (dots) or "
                "infeasible (grey crosses), and the Pareto front (red), the feasible "
                "evaluations that no other one beats in every objective."
                if pairs
                else "Every complete evaluation, feasible (dots) or infeasible (grey "
                "crosses), and the Pareto front (red), the feasible evaluations that no "
                "other one beats in both objectives; the step line is the edge of the "
                "region the front dominates."
            ),
        )
    ]
    if result["n_feasible"]:
        out.append(
            _figure(
                plot_hypervolume(result),
                "hypervolume",
                dpi,
                "The hypervolume the feasible evaluations made so far dominate, after each "
                "evaluation. Its reference point (in the title) is, for each objective, the "
                "worst feasible value observed plus 10% of the observed range, computed once "
                "from the whole study: the curve compares the evaluations of this study, "
                "not studies with other reference points.",
            )
        )
    else:
        out.append('<p class="note">No evaluation is feasible: there is no hypervolume.</p>')
    space = result.space
    shown = list(space.names[:max_dimensions])
    note = (
        f" The first {len(shown)} of {space.n_dims} dimensions are shown."
        if len(shown) < space.n_dims
        else ""
    )
    out.append(
        _figure(
            plot_evaluations(result, dimensions=shown),
            "evaluations",
            dpi,
            "Where the evaluations went: histograms per dimension and the pairs, "
            f"coloured by evaluation number (dark: early); the star is the front's point "
            f"best in the first objective.{note}",
        )
    )
    return out


def _front_table(result: OptimizeResult) -> str:
    """The Pareto front of several objectives: trial, each objective, the point."""
    space = result.space
    names = list(result["objectives"])
    numbers = result.get("numbers", list(range(len(result.x_iters))))
    head = ["trial", *names, *space.names]
    rows = ["<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    for k, values in zip(result["pareto_index"], result["pareto_front"]):
        cells = [str(numbers[k]), *(_cell(v) for v in values)]
        cells += [
            _cell(_value_of(result.x_iters[k], name, j)) for j, name in enumerate(space.names)
        ]
        rows.append("<tr>" + "".join(_td(c) for c in cells) + "</tr>")
    n = len(result["pareto_index"])
    title = f"<h2>Pareto front ({n} trial{'' if n == 1 else 's'})</h2>"
    if not n:
        return title + '\n<p class="note">No complete trial is feasible yet.</p>'
    note = (
        '<p class="note">The feasible trials that no other trial beats in every objective, '
        f"sorted by {html.escape(names[0])}.</p>"
    )
    return f"{title}\n{note}\n<table>\n" + "\n".join(rows) + "\n</table>"


def _td(cell: str) -> str:
    return f'<td class="text">{cell}</td>' if _is_text(cell) else f"<td>{cell}</td>"


def _figure(fig: Figure, alt: str, dpi: int, caption: str) -> str:
    """The figure as an ``<img>`` with its PNG inside; the figure is closed."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    try:
        fig.savefig(buffer, format="png", dpi=dpi)
    finally:
        plt.close(fig)
    width, height = (fig.get_size_inches() * dpi).round().astype(int)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return (
        f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(alt)}" '
        f'width="{width}" height="{height}">'
        f"<figcaption>{html.escape(caption)}</figcaption></figure>"
    )


def _trial_table(result: OptimizeResult) -> str:
    space = result.space
    n = len(result.x_iters)
    numbers = result.get("numbers", list(range(n)))
    statuses = result.get("statuses", ["complete"] * n)
    errors = result.get("errors", [None] * n)
    origins = result.get("origins")
    eval_time = result.get("eval_time")
    best = _best_index(result) if result.x is not None else None
    metrics = _metric_columns(result)
    marked = set()
    if "objectives" in result and len(result["objectives"]) > 1:
        best, marked = None, {int(k) for k in result["pareto_index"]}
    head = ["trial", *space.names, *(metrics or ["value"]), "state"]
    head += ["feasible"] if metrics and result["constraints"] else []
    head += ["origin"] if origins is not None else []
    head += ["seconds"] if eval_time is not None else []
    head += ["error"]
    rows = ["<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    values = np.asarray(result.func_vals, dtype=float)
    for k in range(n):
        cells = [str(numbers[k])]
        cells += [
            _cell(_value_of(result.x_iters[k], name, j)) for j, name in enumerate(space.names)
        ]
        if metrics:
            row_metrics = result["metrics"][k] or {}
            cells += [_cell(row_metrics.get(m, math.nan)) for m in metrics]
        else:
            cells.append(_cell(values[k]))
        cells.append(html.escape(str(statuses[k])))
        if metrics and result["constraints"]:
            complete = statuses[k] == "complete"
            cells.append(("yes" if result["feasible"][k] else "no") if complete else "")
        if origins is not None:
            cells.append(html.escape(str(origins[k])))
        if eval_time is not None:
            cells.append(_cell(eval_time[k]))
        cells.append(html.escape(str(errors[k] or "")))
        kind = "best" if k == best or k in marked else ("failed" if statuses[k] == "failed" else "")
        row = "".join(
            f'<td class="text">{c}</td>' if _is_text(c) else f"<td>{c}</td>" for c in cells
        )
        rows.append(f'<tr class="{kind}">{row}</tr>' if kind else f"<tr>{row}</tr>")
    return "<h2>Trials</h2>\n<table>\n" + "\n".join(rows) + "\n</table>"


# -- formatting ----------------------------------------------------------------------------
def _best_index(result: OptimizeResult) -> int:
    if "objectives" in result:
        # The result's x: the best feasible point, or the least violation when none is.
        if len(result["pareto_index"]):
            return int(result["pareto_index"][0])
        found = [k for k, x in enumerate(result.x_iters) if x is result.x]
        if found:
            return found[0]
    values = np.asarray(result.func_vals, dtype=float)
    return int(np.nanargmin(values))


def _metric_columns(result: OptimizeResult) -> list[str]:
    """The objectives and the constrained metrics, for a study with objectives."""
    if "objectives" not in result:
        return []
    limited = [Constraint.parse(text).metric for text in result["constraints"]]
    return list(dict.fromkeys([*result["objectives"], *limited]))


_ABSENT = object()


def _value_of(point: Any, name: str, j: int) -> Any:
    if isinstance(point, dict):
        return point.get(name, _ABSENT)
    return point[j]


def _cell(value: Any) -> str:
    if value is _ABSENT:
        return "&ndash;"  # an inactive dimension of a conditional space
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral)):
        value = float(value)
        return "" if math.isnan(value) else f"{value:.6g}"
    return html.escape(str(value))


def _is_text(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return bool(cell) and cell != "&ndash;"
    return False

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
from ..history import OptimizeResult
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
    if result.get("surrogate"):
        facts.append(("surrogate", str(result["surrogate"])))
    if result.get("random_state") is not None:
        facts.append(("seed", str(result["random_state"])))
    rows = "".join(
        f'<tr><td class="text">{html.escape(k)}</td><td>{html.escape(v)}</td></tr>'
        for k, v in facts
    )
    out = ["<h2>Study</h2>", f"<table>{rows}</table>", "<h2>Best trial</h2>"]
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
    out.append(
        _figure(
            plot_convergence(result),
            "convergence",
            dpi,
            "The best value found so far after each evaluation (line) and every "
            "evaluated value (dots); failed evaluations have no dot.",
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
    head = ["trial", *space.names, "value", "state"]
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
        cells += [_cell(values[k]), html.escape(str(statuses[k]))]
        if origins is not None:
            cells.append(html.escape(str(origins[k])))
        if eval_time is not None:
            cells.append(_cell(eval_time[k]))
        cells.append(html.escape(str(errors[k] or "")))
        kind = "best" if k == best else ("failed" if statuses[k] == "failed" else "")
        row = "".join(
            f'<td class="text">{c}</td>' if _is_text(c) else f"<td>{c}</td>" for c in cells
        )
        rows.append(f'<tr class="{kind}">{row}</tr>' if kind else f"<tr>{row}</tr>")
    return "<h2>Trials</h2>\n<table>\n" + "\n".join(rows) + "\n</table>"


# -- formatting ----------------------------------------------------------------------------
def _best_index(result: OptimizeResult) -> int:
    values = np.asarray(result.func_vals, dtype=float)
    return int(np.nanargmin(values))


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

"""Tables and figures of the benchmark pages, generated from the committed result files.

``docs/conf.py`` calls :func:`generate` when the build starts. Each table is
written as a Markdown file to ``docs/generated/tables/`` and pulled into its page with
MyST's ``{include}`` directive; regret figures go to
``docs/generated/figures/``. Nothing here holds a measured number: every cell
is read from ``benchmarks/results/<experiment>/`` at build time, so a page
shows what the files hold when the docs are built, an incomplete grid
included; the commands quoted under a table come from the experiment's
``manifest.json`` (see ``benchmarks/README.md``).

Run it by hand to look at the tables without building the docs::

    python docs/_ext/results_tables.py     # writes docs/generated/tables/ and figures/
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results"
REGRET_GRID = RESULTS / "regret" / "grid"  # the regret grid, every method
EVERY_SURROGATE_GRID = RESULTS / "regret" / "every_surrogate"  # 5 seeds, refinement only
MONDRIAN_EXACT = RESULTS / "regret" / "mondrian_exact"
OUT = ROOT / "docs" / "generated" / "tables"
FIGURES = ROOT / "docs" / "generated" / "figures"

DASH = "–"


# -- helpers ---------------------------------------------------------------------------------
def _load(name: str):
    """A JSON result file, named ``<experiment>/<file>.json`` under ``benchmarks/results/``."""
    return json.loads((RESULTS / name).read_text())


def _record_files(folder: Path) -> list[Path]:
    """The record files of a grid's folder: compressed ``.jsonl.gz`` and plain ``.jsonl``."""
    return sorted([*folder.glob("*.jsonl.gz"), *folder.glob("*.jsonl")])


def _problem_of(file: Path) -> str:
    return file.name.removesuffix(".gz").removesuffix(".jsonl")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str | None = None) -> str:
    """A Markdown table; ``align`` holds one of ``l``/``r`` per column (default: first left)."""
    align = align or "l" + "r" * (len(header) - 1)
    rule = ["---" if a == "l" else "---:" for a in align]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(rule) + " |"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _num(value: float | None) -> str:
    """Two decimals; whole numbers from 10; ``4.1e8`` from 10,000; two digits below 0.01."""
    if value is None:
        return DASH
    if not math.isfinite(value):
        return str(value)
    size = abs(value)
    if size >= 1e4 or 0 < size < 1e-2:
        mantissa, exponent = f"{value:.1e}".split("e")
        return f"{mantissa.removesuffix('.0')}e{int(exponent)}"
    return f"{value:.0f}" if size >= 10 else f"{value:.2f}"


def _bold_lowest(cells: dict[str, float], fmt: Callable[[float], str]) -> dict[str, str]:
    lowest = min(cells.values())
    return {k: (f"**{fmt(v)}**" if v == lowest else fmt(v)) for k, v in cells.items()}


def _commands(path: Path) -> list[str]:
    """The commands that wrote ``path``, from its experiment folder's ``manifest.json``."""
    folder = path if path.is_dir() else path.parent
    runs = json.loads((folder / "manifest.json").read_text())["runs"]
    return [
        command
        for run in runs
        if path.is_dir() or any(fnmatch.fnmatch(path.name, p) for p in run["files"])
        for command in run["command"]
    ]


def _source(*paths: Path, command: bool | str = False) -> str:
    """Where a table comes from, and with ``command`` the command(s) that wrote it.

    ``command=True`` quotes the commands the experiments' manifests give for
    ``paths``; a string is quoted as it is (for one part of a file that
    several commands wrote).
    """
    names = ", ".join(f"`{p.relative_to(ROOT)}`" for p in paths)
    text = f"Generated from {names} when these docs were built"
    if not command:
        return text + "."
    commands = (
        [command]
        if isinstance(command, str)
        else list(dict.fromkeys(c for p in paths for c in _commands(p)))
    )
    return text + "; written by " + ", ".join(f"`{c}`" for c in commands) + "."


# -- regret grids ----------------------------------------------------------------------------
def _seed_counts(table: dict) -> str:
    from treebo.bench import surrogate_order

    methods = surrogate_order(s for row in table.values() for s in row["n_seeds"])
    rows = [
        [name] + [str(row["n_seeds"].get(m, DASH)) for m in methods] for name, row in table.items()
    ]
    return _table(["problem", *methods], rows)


def regret_grid() -> dict[str, str]:
    """The regret grid: medians, seeds recorded, BwO seed by seed."""
    from treebo.bench import format_paired, format_summary, load_results, paired_wins, summary_table

    selection = _model_selection_problems()
    records = [r for r in load_results(REGRET_GRID) if r["problem"] not in selection]
    table = summary_table(records)
    n_files = len({_problem_of(p) for p in _record_files(REGRET_GRID)} - selection)
    note = f"{len(records)} run records in {n_files} files. " + _source(REGRET_GRID)
    return {
        "regret_grid_summary": format_summary(table) + "\n\n" + note,
        "regret_grid_seeds": _seed_counts(table),
        "regret_grid_paired": format_paired(paired_wins(records, "bwo"), "bwo"),
        "regret_grid_figures": _figures(REGRET_GRID, "regret_grid", sorted(table)),
    }


def _model_selection_problems() -> set[str]:
    from treebo.problems import problem_suites

    return set(problem_suites()["model_selection"])


def model_selection_grid() -> dict[str, str]:
    """The conditional model-selection problems, treebo beside its peers."""
    from treebo.bench import format_summary, load_results, summary_table

    selection = _model_selection_problems()
    records = [r for r in load_results(REGRET_GRID) if r["problem"] in selection]
    if not records:
        return {"model_selection_summary": "No run recorded yet."}
    files = [p for p in _record_files(REGRET_GRID) if _problem_of(p) in selection]
    return {
        "model_selection_summary": format_summary(summary_table(records)) + "\n\n" + _source(*files)
    }


OPTUNA_SAMPLER = RESULTS / "optuna_sampler" / "grid"


def optuna_sampler() -> dict[str, str]:
    """The treebo Optuna sampler against Optuna's TPE and GP samplers."""
    from treebo.bench import load_results

    records = load_results(OPTUNA_SAMPLER) if OPTUNA_SAMPLER.exists() else []
    if not records:
        return {"optuna_sampler_summary": "No run recorded yet."}
    finals: dict[tuple[str, str], list[float]] = {}
    for r in records:
        finals.setdefault((r["problem"], r["sampler"]), []).append(r["log10_regret"][-1])
    samplers = [s for s in ("treebo", "tpe", "gp") if any(k[1] == s for k in finals)]
    rows = []
    for problem in sorted({k[0] for k in finals}):
        cells = {
            s: statistics.median(finals[problem, s]) for s in samplers if (problem, s) in finals
        }
        shown = _bold_lowest(cells, lambda v: f"{v:.2f}")
        seeds = sorted({len(finals[problem, s]) for s in cells})
        rows.append([problem, "/".join(map(str, seeds))] + [shown.get(s, DASH) for s in samplers])
    trials = sorted({r["n_trials"] for r in records})
    return {
        "optuna_sampler_summary": _table(["problem", "seeds", *samplers], rows)
        + f"\n\nMedian final log10 regret after {'/'.join(map(str, trials))} trials. "
        + _source(OPTUNA_SAMPLER, command=True)
    }


def every_surrogate_grid() -> dict[str, str]:
    """The every-surrogate grid of ``benchmarks/results/regret/every_surrogate`` (5 seeds)."""
    from treebo.bench import format_paired, format_summary, load_results, paired_wins, summary_table

    records = load_results(EVERY_SURROGATE_GRID)
    return {
        "every_surrogate_grid_summary": format_summary(summary_table(records))
        + "\n\n"
        + _source(EVERY_SURROGATE_GRID),
        "every_surrogate_grid_paired": format_paired(paired_wins(records, "bwo"), "bwo"),
    }


def mondrian_exact() -> dict[str, str]:
    """Final log10 regret per seed: ``mode="exact"`` against the default mode of the same seeds."""
    from treebo.bench import load_results, regret_curves

    exact = {c.problem: c for c in regret_curves(load_results(MONDRIAN_EXACT))}
    default = {
        c.problem: c
        for c in regret_curves(load_results(EVERY_SURROGATE_GRID))
        if c.surrogate == "mondrian"
    }
    rows = []
    for problem, c in sorted(exact.items()):
        base = dict(zip(default[problem].seeds, np.log10(default[problem].curves[:, -1])))
        for seed, final in zip(c.seeds, np.log10(c.curves[:, -1])):
            rows.append(
                [problem, str(seed), f"{final:.2f}", f"{base[seed]:.2f}" if seed in base else DASH]
            )
    return {
        "mondrian_exact": _table(
            ["problem", "seed", 'mode="exact"', 'mode="skgarden" (default)'], rows, "llrr"
        )
        + "\n\n"
        + _source(MONDRIAN_EXACT, EVERY_SURROGATE_GRID)
    }


def _figures(results: Path, stem: str, problems: Sequence[str]) -> str:
    """Regret figures drawn from ``results`` (redrawn only when a record file is newer)."""
    from treebo.bench import load_results
    from treebo.plotting import plot_regret

    out = FIGURES / stem
    out.mkdir(parents=True, exist_ok=True)
    records = None
    lines = []
    newest = {}
    for file in _record_files(results):
        problem = _problem_of(file)
        newest[problem] = max(newest.get(problem, 0.0), file.stat().st_mtime)
    for problem in problems:
        target = out / f"{problem}.png"
        if not target.exists() or target.stat().st_mtime < newest[problem]:
            if records is None:
                records = load_results(results)
            fig = plot_regret([r for r in records if r["problem"] == problem], problem)
            fig.savefig(target, dpi=90)
        lines.append(f"![Regret curves on {problem}](/generated/figures/{stem}/{problem}.png)")
    return "\n\n".join(lines)


# -- COCO bbob -------------------------------------------------------------------------------
BBOB = RESULTS / "bbob"


def _bbob_goals():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bbob_goals  # the goals script holds the tables' and figures' code
    finally:
        sys.path.pop(0)
    return bbob_goals


def bbob() -> dict[str, str]:
    """COCO bbob: median final precision per dimension and function, verdicts, figures."""
    from treebo.bench import load_results
    from treebo.problems.bbob import BBOB_PROTOCOL

    goals = _bbob_goals()
    records = load_results(BBOB) if BBOB.exists() else []
    none = f"No run recorded yet: `{BBOB.relative_to(ROOT)}/` holds no record."
    out = {f"bbob_table_{d}d": none for d in BBOB_PROTOCOL["dims"]}
    out |= {"bbob_long": none, "bbob_goals": none, "bbob_figures": none, "bbob_status": none}
    if not records:
        return out
    runs = len(BBOB_PROTOCOL["instances"]) * len(BBOB_PROTOCOL["seeds"])
    table = goals.goal_table(records)
    methods = sorted({r["surrogate"] for r in records})
    out["bbob_status"] = (
        f"{len(records)} run records of {', '.join(f'`{m}`' for m in methods)}"
        f" in {len(_record_files(BBOB))} files. " + _source(BBOB)
    )
    for dim in BBOB_PROTOCOL["dims"]:
        if dim in table:
            out[f"bbob_table_{dim}d"] = goals.format_table(table[dim], runs)
        else:
            out[f"bbob_table_{dim}d"] = f"No {dim}-D run recorded yet."
    long = BBOB_PROTOCOL["long"]
    long_table = goals.goal_table(records, long["budget_per_dim"]).get(long["dim"], {})
    long_rows = {f: row for f, row in long_table.items() if f in long["functions"]}
    out["bbob_long"] = (
        goals.format_table(long_rows, runs)
        if long_rows
        else f"No {long['dim']}-D run with {long['budget_per_dim']} evaluations per "
        "dimension recorded yet."
    )
    out["bbob_goals"] = goals.format_verdicts(goals.verdicts(table), goals.sphere_verdict(records))
    FIGURES.mkdir(parents=True, exist_ok=True)
    newest = max(p.stat().st_mtime for p in _record_files(BBOB))
    heat, ecdf = FIGURES / "bbob_heatmap.png", FIGURES / "bbob_ecdf.png"
    if not heat.exists() or heat.stat().st_mtime < newest:
        goals.plot_heatmap(table, heat)
    if not ecdf.exists() or ecdf.stat().st_mtime < newest:
        goals.plot_ecdf(records, ecdf, sorted(table))
    out["bbob_figures"] = (
        "![Heat map: median final log10 precision per function and method, coloured by the "
        "distance to the best method of the row](/generated/figures/bbob_heatmap.png)\n\n"
        "![Runtime ECDF: share of (run, target) pairs reached after each number of "
        "evaluations per dimension](/generated/figures/bbob_ecdf.png)"
    )
    return out


# -- several objectives and constraints --------------------------------------------------------
SEVERAL_OBJECTIVES = RESULTS / "several_objectives"


def several_objectives() -> dict[str, str]:
    """Several objectives and constraints: treebo against Optuna's samplers and random search."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import several_objectives as script  # the benchmark holds the table's code
    finally:
        sys.path.pop(0)
    records = script.read_records(SEVERAL_OBJECTIVES)
    if not records:
        folder = SEVERAL_OBJECTIVES.relative_to(ROOT)
        return {"several_objectives_table": f"No run recorded yet: `{folder}/` holds no record."}
    return {
        "several_objectives_table": script.format_table(records)
        + "\n\n"
        + f"{len(records)} run records. "
        + _source(SEVERAL_OBJECTIVES, command=True)
    }


# -- timing ----------------------------------------------------------------------------------
GOALS = {
    "bwo": "≤ 1.5x, < 1 s",
    "gp": "(baseline)",
    "ngboost": "≤ 2 s",
    "bart": "≤ 4 s",
    "mondrian": "fit + predict(50,000) < 1.5 s",
    "vsglb": "≤ 3 s",
    "csglb": "≤ 3 s",
    "cbsglb": "≤ 3 s",
}


def _dearest_step(rows: list[dict]) -> list[dict]:
    """One row per size, space and surrogate: the dearest step kind where each was timed."""
    kept: dict[tuple, dict] = {}
    for r in rows:
        key = (r["N"], r["D"], r.get("space"), r["surrogate"])
        if key not in kept or r["median"] > kept[key]["median"]:
            kept[key] = r
    return list(kept.values())


def iteration_time() -> dict[str, str]:
    grid = _dearest_step(_load("iteration_time/iteration_time.json")["rows"])
    sizes = list(dict.fromkeys((r["N"], r["D"]) for r in grid))
    names = list(dict.fromkeys(r["surrogate"] for r in grid if r["surrogate"] != "reference"))
    rows = []
    for n, d in sizes:
        cells = {r["surrogate"]: r for r in grid if (r["N"], r["D"]) == (n, d)}
        row = [str(n), str(d), f"{cells['reference']['median']:.2f}"]
        for name in names:
            r = cells.get(name)
            row.append(DASH if r is None else f"{_num(r['median'])} ({_num(r['ratio'])})")
        rows.append(row)
    header = ["N", "D", "reference s", *(f"`{n}` s (ratio)" for n in names)]
    grid_md = (
        _table(header, rows, "rr" + "r" * (len(header) - 2))
        + "\n\n"
        + _source(RESULTS / "iteration_time/iteration_time.json", command=True)
    )

    every = _dearest_step(_load("iteration_time/iteration_time_all_n200_d6.json")["rows"])
    reference = next(r["median"] for r in every if r["surrogate"] == "reference")
    rows = [
        [
            f"`{r['surrogate']}`",
            f"{r['median']:.2f}",
            f"{r['fit']:.2f}",
            f"{r['acq']:.2f}",
            f"{r['ratio']:.2f}",
            GOALS.get(r["surrogate"], ""),
        ]
        for r in every
        if r["surrogate"] != "reference"
    ]
    every_md = _table(
        [
            "surrogate",
            "s per iteration",
            "fit s",
            "acquisition s",
            f"ratio to the reference ({reference:.2f} s)",
            "goal",
        ],
        rows,
        "lrrrrl",
    )
    every_md += "\n\n" + _source(
        RESULTS / "iteration_time/iteration_time_all_n200_d6.json", command=True
    )
    spaces = _dearest_step(_load("iteration_time/iteration_time_spaces_n200.json")["rows"])
    kinds = list(dict.fromkeys(r["space"] for r in spaces))
    names = list(dict.fromkeys(r["surrogate"] for r in spaces if r["surrogate"] != "reference"))
    rows = []
    for kind in kinds:
        cells = {r["surrogate"]: r for r in spaces if r["space"] == kind}
        row = [kind, str(cells["reference"]["D"]), f"{cells['reference']['median']:.2f}"]
        row += [f"{_num(cells[n]['median'])} ({_num(cells[n]['ratio'])})" for n in names]
        rows.append(row)
    spaces_md = _table(
        ["space", "encoded columns", "reference s", *(f"`{n}` s (ratio)" for n in names)],
        rows,
        "lrr" + "r" * len(names),
    )
    spaces_md += "\n\n" + _source(
        RESULTS / "iteration_time/iteration_time_spaces_n200.json", command=True
    )
    return {
        "iteration_time_grid": grid_md,
        "iteration_time_all": every_md,
        "iteration_time_spaces": spaces_md,
    }


def _command(data: dict, default: str) -> str:
    """The record's command line, without the notes on where it was run (kept in the file)."""
    return re.sub(r"\s*\(at commit [^)]*\)", "", data.get("command", default)).strip()


def memory() -> dict[str, str]:
    blocks = []
    files = {
        "memory/memory.json": "Each trial keeps a copy of its point, as in treebo",
        "memory/memory_view_into_pool.json": (
            "For comparison, each trial keeps a view into the candidate pool"
        ),
    }
    for name, label in files.items():
        data = _load(name)
        rows = [
            [str(s["calls"]), f"{s['rss_mib']:.1f}", f"{s['seconds']:.0f}"] for s in data["samples"]
        ]
        blocks.append(
            f"**{label}** ({data['dim']}-D, `{data['surrogate']}`, "
            f"seed {data['seed']}; growth {data['growth_mib']:.1f} MiB; "
            f"`{_command(data, 'python benchmarks/memory.py')}`):\n\n"
            + _table(["calls", "RSS MiB", "seconds"], rows)
        )
    return {"memory": "\n\n".join(blocks) + "\n\n" + _source(*(RESULTS / f for f in files))}


# -- uncertainty -----------------------------------------------------------------------------
def _kl_cell(values: np.ndarray, bold: bool) -> str:
    """Median [quartiles]; the median alone when the seeds agree (no seed-dependent part)."""
    q25, q50, q75 = np.quantile(values, [0.25, 0.5, 0.75])
    median = f"**{_num(q50)}**" if bold else _num(q50)
    return median if q25 == q75 else f"{median} [{_num(q25)}, {_num(q75)}]"


def kl_tables() -> dict[str, str]:
    data = _load("kl_table/kl_table.json")
    labels = data["surrogates"]
    runs = data["references"]["true-noise"]["surrogate_seeds"]["few"]
    columns = (
        (1, "KL(model ‖ GP), whole grid"),
        (3, "KL(model ‖ GP), between the data"),
        (4, "KL(GP ‖ model), between the data"),
    )
    values = {label: np.array([run[label] for run in runs]) for label in labels}
    medians = {
        j: {label: float(np.median(values[label][:, j])) for label in labels} for j, _ in columns
    }
    rows = []
    for label in labels:
        rows.append(
            [f"`{label}`"]
            + [
                _kl_cell(values[label][:, j], medians[j][label] == min(medians[j].values()))
                for j, _ in columns
            ]
        )
    few = (
        _table(["`few` (5 points)", *(n for _, n in columns)], rows)
        + "\n\n"
        + _source(RESULTS / "kl_table/kl_table.json", command=True)
    )

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from kl_table import PAPER  # the paper's Table 2, kept with the script that compares
    finally:
        sys.path.pop(0)
    single = data["references"]["ml"]["single"]
    examples = ("few", "many", "cubic")
    rows = []
    for label in labels:
        ours = " / ".join(_num(single[e][label][0]) for e in examples)
        paper = " / ".join(f"{v:.2f}" for v in PAPER[label]) if label in PAPER else DASH
        rows.append([f"`{label}`", ours, paper])
    published = _table(
        ["surrogate", "treebo: few / many / cubic", "paper: few / many / cubic"], rows, "lll"
    )
    published += "\n\n" + _source(RESULTS / "kl_table/kl_table.json", command=True)
    return {"kl_few": few, "kl_published": published}


def calibration() -> dict[str, str]:
    designs = {
        "sobol": _load("calibration/calibration_sobol_standardize.json"),
        "bo": _load("calibration/calibration_bo_standardize.json"),
    }
    names = designs["sobol"]["surrogates"]
    rows = []
    for name in names:
        row = [f"`{name}`"]
        for data in designs.values():
            if name not in data["surrogates"]:
                row += [DASH, DASH]
                continue
            per_problem = []
            for runs in data["runs"].values():
                cov = np.mean([r[name]["coverage"] for r in runs], axis=0)
                nll = float(np.mean([r[name]["nll"] for r in runs]))
                per_problem.append((*cov, nll))
            values = np.array(per_problem)
            cov = " / ".join(f"{values[:, j].mean():.2f}" for j in range(3))
            row += [cov, _num(float(np.median(values[:, 3])))]
        rows.append(row)
    text = _table(
        [
            "surrogate",
            "50 Sobol points: coverage 50/80/95%",
            "NLL",
            "50 points of a BwO run: coverage 50/80/95%",
            "NLL",
        ],
        rows,
        "llrlr",
    )
    text += "\n\n" + _source(
        RESULTS / "calibration/calibration_sobol_standardize.json",
        RESULTS / "calibration/calibration_bo_standardize.json",
        command=True,
    )
    return {"calibration": text}


def knowledge_auc() -> dict[str, str]:
    data = _load("knowledge_uncertainty_auc/knowledge_uncertainty_auc.json")

    def cell(values):
        return f"{statistics.mean(values):.3f} ± {statistics.pstdev(values):.3f}"

    rows = [[f"`{r['surrogate']}`", cell(r["heart"]), cell(r["continuous"])] for r in data["rows"]]
    text = _table(
        [
            "surrogate",
            "categorical heart (34 vs 47 cells)",
            "continuous heart (2,000 vs 2,000 points)",
        ],
        rows,
    )
    return {
        "knowledge_auc": text
        + f"\n\n{data['seeds']} seeds, mean ± s.d. "
        + _source(
            RESULTS / "knowledge_uncertainty_auc/knowledge_uncertainty_auc.json", command=True
        )
    }


def sglb_temperature() -> dict[str, str]:
    rows_in = _load("sglb_temperature/sglb_temperature.json")
    problems = list(dict.fromkeys(r["problem"] for r in rows_in))
    configs = list(dict.fromkeys((r["surrogate"], r["beta_over_n"]) for r in rows_in))
    n = rows_in[0]["n"]
    rows = []
    for surrogate, multiple in configs:
        label = f"`{surrogate}`"
        if multiple is not None:
            label += ", β = N (default)" if multiple == 1 else f", β = {multiple:g}N"
        row = [label]
        for problem in problems:
            r = next(
                r
                for r in rows_in
                if r["problem"] == problem
                and (r["surrogate"], r["beta_over_n"]) == (surrogate, multiple)
            )
            row.append(f"{r['corr']:.2f} / {r['rmse']:.2f} / {r['sd']:.2f} / {_num(r['nll'])}")
        rows.append(row)
    text = _table(
        [f"N = {n}", *(f"{p}: corr / RMSE / s.d. / NLL" for p in problems)],
        rows,
        "l" * (1 + len(problems)),
    )
    return {
        "sglb_temperature": text
        + "\n\n"
        + _source(RESULTS / "sglb_temperature/sglb_temperature.json", command=True)
    }


# -- settings --------------------------------------------------------------------------------
def ngboost_bart_settings() -> dict[str, str]:
    data = _load("ngboost_bart_settings/ngboost_bart_settings.json")
    settings = list(dict.fromkeys(r["setting"] for r in data["rows"]))
    rows = []
    for setting in settings:
        by_n = {r["N"]: r for r in data["rows"] if r["setting"] == setting}
        ns = sorted(by_n)
        first = by_n[ns[0]]
        mid = by_n.get(200, first)
        rows.append(
            [
                setting,
                " / ".join(f"{by_n[k]['nll']:.2f}" for k in ns),
                " / ".join(f"{by_n[k]['coverage90']:.2f}" for k in ns),
                f"{mid['rmse']:.2f}",
                f"{first['cost']:.2f} ({first['ratio']:.2f})" if "cost" in first else DASH,
            ]
        )
    ns = sorted({r["N"] for r in data["rows"]})
    sizes = " / ".join(map(str, ns))
    quality = _table(
        [
            "setting",
            f"NLL, N = {sizes}",
            f"90% coverage, N = {sizes}",
            "RMSE, N = 200",
            "fit + predict s (ratio)",
        ],
        rows,
        "lllrr",
    )
    quality += "\n\n" + _source(
        RESULTS / "ngboost_bart_settings/ngboost_bart_settings.json", command=True
    )

    regret = _load("ngboost_bart_settings/ngboost_bart_settings_regret.json")
    rows = [
        [
            r["setting"],
            ", ".join(f"{v:.2f}" for v in r["branin"]),
            f"{statistics.median(r['mixed']):.3f}",
        ]
        for r in regret
    ]
    regret_md = _table(
        [
            "setting",
            "Branin log10 regret, 40 calls, seeds 0-2",
            "mixed space best value, 25 calls, seeds 10-13 (median)",
        ],
        rows,
        "llr",
    )
    regret_md += "\n\n" + _source(
        RESULTS / "ngboost_bart_settings/ngboost_bart_settings_regret.json", command=True
    )
    return {"ngboost_bart_settings": quality, "ngboost_bart_regret": regret_md}


# -- parallel --------------------------------------------------------------------------------
def parallel() -> dict[str, str]:
    data = _load("parallel_speedup/parallel_speedup.json")
    speed = data["speedup"]["speedup"]
    backends = [b for b in dict.fromkeys(r["backend"] for r in speed) if b != "sequential"]
    labels = {"processes": "loky processes", "dask": "Dask `LocalCluster`"}
    workers = sorted({r["workers"] for r in speed if r["backend"] != "sequential"})
    rows = []
    for k in workers:
        row = [str(k)]
        for b in backends:
            r = next((r for r in speed if r["backend"] == b and r["workers"] == k), None)
            row.append(DASH if r is None else f"{r['speedup_vs_sequential']:.2f}")
        rows.append(row)
    args = data["speedup"]["args"]
    speed_md = _table(["workers", *(labels.get(b, b) for b in backends)], rows)
    speed_md += (
        f"\n\n{args['n_calls']} evaluations of {args['problem']} behind a "
        f"{args['delay']:g} s sleep, median over {args['seeds']} seeds; load average "
        f"{data['speedup']['load_start'][0]:.1f} at the start on "
        f"{data['speedup']['cpus']} cores. "
        + _source(
            RESULTS / "parallel_speedup/parallel_speedup.json",
            command="python benchmarks/parallel_speedup.py",
        )
    )

    lies = data["regret"]["regret"]
    rows = [
        [
            str(r["k"]),
            r["strategy"] if r["strategy"] != "-" else "(none: sequential)",
            f"{r['median_regret']:.3f}",
        ]
        for r in lies
    ]
    rargs = data["regret"]["args"]
    lies_md = _table(["k pending", "strategy", "median final regret"], rows, "rlr")
    lies_md += (
        f"\n\n{rargs['n_calls']} evaluations of {rargs['problem']}, "
        f"{rargs['regret_seeds']} seeds. "
        + _source(
            RESULTS / "parallel_speedup/parallel_speedup.json",
            command="python benchmarks/parallel_speedup.py --part regret "
            "--strategies cl_min cl_mean cl_max --workers 1 2",
        )
    )

    batch = data["batch"]["batch"]
    rows = [
        [
            f"`{r['surrogate']}`",
            str(r["q"]),
            f"{r['per_point']:.2f}",
            f"{r['vs_q_single_asks']:.2f}",
        ]
        for r in batch
    ]
    batch_md = _table(["surrogate", "q", "s per point", "cost / q single asks"], rows, "lrrr")
    batch_md += "\n\n" + _source(
        RESULTS / "parallel_speedup/parallel_speedup.json",
        command="python benchmarks/parallel_speedup.py --part batch",
    )
    return {"parallel_speedup": speed_md, "parallel_lies": lies_md, "parallel_batch": batch_md}


GENERATORS = (
    regret_grid,
    model_selection_grid,
    optuna_sampler,
    every_surrogate_grid,
    mondrian_exact,
    bbob,
    iteration_time,
    memory,
    kl_tables,
    calibration,
    knowledge_auc,
    sglb_temperature,
    ngboost_bart_settings,
    parallel,
    several_objectives,
)


def generate(out: Path = OUT) -> list[Path]:
    """Write every generated table to ``out`` (one ``.md`` file each); return the paths.

    A file is rewritten only when its text changed, so Sphinx rereads only the
    pages whose tables did.
    """
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for make in GENERATORS:
        for name, text in make().items():
            path = out / f"{name}.md"
            text = text.rstrip() + "\n"
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
            written.append(path)
    return written


if __name__ == "__main__":
    for path in generate():
        print(path.relative_to(ROOT))

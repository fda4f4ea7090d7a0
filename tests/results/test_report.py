"""The HTML report: its content, and the page as a browser shows it (headless Chromium)."""

import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from treebo import Categorical, Integer, Real, minimize
from treebo.cli import main

matplotlib = pytest.importorskip(
    "matplotlib", reason="the report's figures need matplotlib: pip install 'treebo[plot]'"
)
matplotlib.use("Agg")

from treebo.results.report import report_html, write_report  # noqa: E402

SPACE = {
    "lr": Real(1e-4, 1.0, "log-uniform"),
    "depth": Integer(1, 8),
    "kind": Categorical(["<b>bold</b>", "plain"]),
    "noise": Real(0, 1),
}


def _objective(x):
    if x["depth"] == 8:
        raise RuntimeError("depth 8 <crashes> & burns")
    return (np.log10(x["lr"]) + 2) ** 2 + 0.1 * abs(x["depth"] - 3)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "study.db"
    res = minimize(
        _objective,
        SPACE,
        n_calls=14,
        random_state=0,
        storage=path,
        n_candidates=1000,
        x0=[{"lr": 0.5, "depth": 8, "kind": "plain", "noise": 0.5}],
    )
    return path, res


@pytest.fixture(scope="module")
def page(study, tmp_path_factory):
    path, _ = study
    out = tmp_path_factory.mktemp("page") / "report.html"
    assert main(["report", str(path), "-o", str(out)]) == 0
    return out


IMAGE = re.compile(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)" alt="([^"]+)"')


def test_report_holds_the_best_trial_figures_and_trials(study, page):
    _, res = study
    text = page.read_text()
    assert [alt for _, alt in IMAGE.findall(text)] == [
        "convergence",
        "parameter importance",
        "partial dependence",
        "evaluations",
    ]
    # Self-contained: nothing is loaded from anywhere (no src/href but the data: images).
    assert not re.search(r'(src|href)="(?!data:)', text) and "<script" not in text
    assert "<link" not in text and "@import" not in text and "url(" not in text
    # One table row per evaluated trial, the best one marked.
    trials = text.split("<h2>Trials</h2>")[1]
    assert trials.count("<tr") == len(res.x_iters) + 1
    best = re.search(r'<tr class="best"><td>(\d+)</td>', trials)
    assert int(best.group(1)) == int(np.nanargmin(res.func_vals))
    assert f"{res.fun:.6g}" in text.split("<h2>Best trial</h2>")[1].split("<h2>")[0]
    # Values and error texts are escaped, not markup.
    assert "&lt;b&gt;bold&lt;/b&gt;" in text and "<b>bold</b>" not in text
    assert "depth 8 &lt;crashes&gt; &amp; burns" in text
    assert res.n_failed >= 1 and trials.count('<tr class="failed">') == res.n_failed


def test_report_limits_the_grid_figures_to_the_most_important(study):
    _, res = study
    text = report_html(res, max_dimensions=2, title="two <dims>")
    assert "<title>two &lt;dims&gt;</title>" in text
    assert "The 2 most important of 4 dimensions are shown." in text


def test_report_of_a_study_without_a_complete_trial(tmp_path):
    def broken(x):
        raise ValueError("nothing works")

    # catch=: every failure is an expected failed trial, so the run goes on.
    res = minimize(broken, [Real(0, 1)], n_calls=3, random_state=0, catch=ValueError)
    text = report_html(res)
    assert "No trial is complete yet" in text and "<img" not in text
    assert text.count('<tr class="failed">') == 3


def test_cli_report_refuses_a_missing_file(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nope.db"), "-o", str(tmp_path / "r.html")]) == 2
    assert "does not exist" in capsys.readouterr().err


# -- faults: a report that cannot be written leaves the previous one ---------------------------
def _treebo_limited(args, cwd, file_size_limit):
    """``python -m treebo ARGS`` in ``cwd``, unable to write more than ``file_size_limit``
    bytes to any file (a full disk or a quota fails a write the same way)."""
    import os
    import resource
    import sys
    from pathlib import Path

    import treebo

    def limit():
        # Python ignores SIGXFSZ, so a write past the limit fails with EFBIG.
        resource.setrlimit(resource.RLIMIT_FSIZE, (file_size_limit, file_size_limit))

    env = {**os.environ, "PYTHONPATH": str(Path(treebo.__file__).parents[1])}
    return subprocess.run(
        [sys.executable, "-m", "treebo", *args],
        cwd=cwd,
        env=env,
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.fault
def test_a_report_cut_short_by_a_file_size_limit_leaves_the_previous_one(study, tmp_path):
    db, _ = study
    assert main(["report", str(db), "-o", str(tmp_path / "report.html")]) == 0
    before = (tmp_path / "report.html").read_bytes()
    assert len(before) > 100_000  # the limit below is well inside the page

    proc = _treebo_limited(["report", str(db), "-o", "report.html"], tmp_path, len(before) // 2)
    after = (tmp_path / "report.html").read_bytes()
    assert len(after) == len(before) and after == before, proc.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]  # no temporary left
    assert proc.returncode == 1
    assert proc.stderr == "treebo report: error: cannot write report.html: File too large\n"


@pytest.mark.fault
def test_a_report_output_that_cannot_be_a_file_is_refused_before_the_page_is_made(
    study, tmp_path, capsys
):
    db, _ = study
    folder = tmp_path / "report.html"
    folder.mkdir()
    (tmp_path / "notes").write_text("a file\n")
    for output, cause in (
        (folder, "is a directory, not a file"),
        (tmp_path / "notes" / "report.html", f"{tmp_path / 'notes'} is a file, not a directory"),
    ):
        assert main(["report", str(db), "-o", str(output)]) == 2
        captured = capsys.readouterr()
        assert captured.err == f"treebo report: error: --output {output}: {cause}\n"
        assert captured.out == ""
    assert list(folder.iterdir()) == [] and (tmp_path / "notes").read_text() == "a file\n"


def test_write_report_keeps_the_mode_of_the_page_it_replaces(study, tmp_path):
    import os

    _, res = study
    page = tmp_path / "report.html"
    page.write_text("old\n")
    page.chmod(0o640)
    write_report(res, page, dpi=20)
    assert page.read_text().startswith("<!DOCTYPE html>")
    assert page.stat().st_mode & 0o7777 == 0o640
    previous = os.umask(0o027)
    try:
        fresh = write_report(res, tmp_path / "fresh.html", dpi=20)
    finally:
        os.umask(previous)
    assert fresh.stat().st_mode & 0o7777 == 0o640  # 0o666 less the umask, as open() gives


# -- in a browser ----------------------------------------------------------------------------
#: Installed in <head>, so it sees every error from the start; on load it writes what it
#: found into the page, which --dump-dom then prints.
PROBE = """<script>
var treeboErrors = [];
window.addEventListener("error", function (e) {
  treeboErrors.push(e.message || ("failed to load " + (e.target && e.target.tagName)));
}, true);
window.addEventListener("load", function () {
  var images = Array.prototype.map.call(document.images, function (img) {
    var box = img.getBoundingClientRect(), style = getComputedStyle(img);
    return {alt: img.alt, complete: img.complete, naturalWidth: img.naturalWidth,
            naturalHeight: img.naturalHeight, width: box.width, height: box.height,
            visible: style.display !== "none" && style.visibility === "visible"};
  });
  var out = document.createElement("pre");
  out.id = "treebo-probe";
  out.textContent = JSON.stringify({images: images, errors: treeboErrors});
  document.body.appendChild(out);
});
</script>"""

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
needs_browser = pytest.mark.skipif(
    BROWSER is None,
    reason="no headless browser: install Debian's chromium package (apt-get install chromium)",
)


def render(html_path, tmp_path):
    """Open ``html_path`` (with the probe added) in headless Chromium; return what the
    probe found and the page's console messages."""
    probed = tmp_path / f"probed-{html_path.name}"
    probed.write_text(html_path.read_text().replace("<head>", "<head>\n" + PROBE, 1))
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--dump-dom",
        probed.as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="treebo-probe">(.*?)</pre>', done.stdout, re.S)
    assert found, f"the page did not finish loading:\n{done.stderr[-3000:]}"
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&")), console


def problems(probe, console, expected):
    """What is wrong with a rendered page: console output, errors, images not shown."""
    out = [f"console: {line}" for line in console] + [f"error: {e}" for e in probe["errors"]]
    if [image["alt"] for image in probe["images"]] != expected:
        out.append(f"images {[i['alt'] for i in probe['images']]}, expected {expected}")
    for image in probe["images"]:
        if not (
            image["complete"]
            and image["naturalWidth"] > 0
            and image["naturalHeight"] > 0
            and image["width"] > 0
            and image["height"] > 0
            and image["visible"]
        ):
            out.append(f"image {image['alt']!r} is not shown: {image}")
    return out


FIGURES = ["convergence", "parameter importance", "partial dependence", "evaluations"]


@needs_browser
def test_report_renders_in_a_browser_with_every_figure_visible(page, tmp_path):
    probe, console = render(page, tmp_path)
    assert problems(probe, console, FIGURES) == []
    sizes = {i["alt"]: (i["naturalWidth"], i["naturalHeight"]) for i in probe["images"]}
    assert sizes["convergence"] == (540, 360)  # 6 x 4 inches at 90 dpi


@needs_browser
def test_the_browser_check_catches_a_broken_figure(page, tmp_path):
    # The same page with one image's data damaged: the check must report it.
    text = page.read_text()
    broken = tmp_path / "broken.html"
    start = text.index("data:image/png;base64,") + len("data:image/png;base64,")
    broken.write_text(text[:start] + "AAAA" + text[start + 4000 :])
    probe, console = render(broken, tmp_path)
    found = problems(probe, console, FIGURES)
    assert any("'convergence' is not shown" in p for p in found)
    assert any(p.startswith("error:") for p in found)


def test_write_report_creates_the_directory_and_closes_its_figures(study, tmp_path):
    import matplotlib.pyplot as plt

    _, res = study
    before = plt.get_fignums()
    out = write_report(res, tmp_path / "deep" / "dir" / "r.html", dpi=40)
    assert out.exists() and out.read_text().startswith("<!DOCTYPE html>")
    assert plt.get_fignums() == before


# -- several objectives and constraints ------------------------------------------------------
def _design(x):
    if x["depth"] == 8:
        raise RuntimeError("depth 8 fails")
    return {
        "error": (np.log10(x["lr"]) + 2) ** 2 + 0.1 * x["depth"],
        "size": float(x["depth"]) * (1 + x["noise"]),
        "speed": 1.0 / x["depth"],
    }


def _trials_section(text):
    return text.split("<h2>Trials</h2>")[1]


def test_report_of_two_objectives_shows_the_front_and_the_hypervolume(tmp_path):
    from treebo.results.io import read_result

    path = tmp_path / "two.db"
    minimize(
        _design,
        SPACE,
        n_calls=14,
        random_state=0,
        storage=path,
        n_candidates=1000,
        objectives={"error": "minimize", "size": "minimize"},
        constraints=["size <= 6"],
        x0=[{"lr": 0.5, "depth": 8, "kind": "plain", "noise": 0.5}],
    )
    res = read_result(path)
    text = report_html(path)
    assert [alt for _, alt in IMAGE.findall(text)] == ["pareto front", "hypervolume", "evaluations"]
    assert "worst feasible value observed plus 10% of the observed range" in text
    # The front's table: one row per front trial, in the result's order, with its values.
    n = len(res.pareto_index)
    front = text.split("<h2>Pareto front")[1].split("<h2>")[0]
    assert f"({n} trial{'' if n == 1 else 's'})" in front
    numbers = [int(t) for t in re.findall(r"<tr><td>(\d+)</td>", front)]
    assert numbers == [res.numbers[k] for k in res.pareto_index]
    for error, size in res.pareto_front:
        assert f"<td>{error:.6g}</td><td>{size:.6g}</td>" in front
    # The trial table marks the front, shows each metric and whether it is feasible.
    trials = _trials_section(text)
    assert trials.count('<tr class="best">') == n
    marked = [int(t) for t in re.findall(r'<tr class="best"><td>(\d+)</td>', trials)]
    assert sorted(marked) == sorted(res.numbers[k] for k in res.pareto_index)
    assert "<th>error</th><th>size</th><th>state</th><th>feasible</th>" in trials
    infeasible = sum(s == "complete" and not f for s, f in zip(res.statuses, res.feasible))
    assert infeasible and trials.count('<td class="text">no</td>') == infeasible
    assert trials.count('<tr class="failed">') == res.statuses.count("failed") > 0
    assert f"<td>{res.n_feasible} of {len(res.x_iters)}</td>" in text


def test_report_of_three_objectives_draws_pairs(tmp_path):
    path = tmp_path / "three.db"
    minimize(
        _design,
        SPACE,
        n_calls=8,
        random_state=1,
        storage=path,
        n_candidates=1000,
        objectives={"error": "minimize", "size": "minimize", "speed": "maximize"},
    )
    text = report_html(path)
    assert [alt for _, alt in IMAGE.findall(text)] == ["pareto front", "hypervolume", "evaluations"]
    assert "Each pair of objectives" in text


def test_report_of_one_objective_under_constraints_shows_the_best_feasible_trial(tmp_path):
    from treebo.results.io import read_result

    path = tmp_path / "one.db"
    minimize(
        _design,
        SPACE,
        n_calls=10,
        random_state=0,
        storage=path,
        n_candidates=1000,
        objectives=["error"],
        constraints=["size >= 4"],
    )
    res = read_result(path)
    feasible = [k for k in range(len(res.x_iters)) if res.feasible[k]]
    best = min(feasible, key=lambda k: res.metrics[k]["error"])
    text = report_html(path)
    # The figures of one objective, the convergence over the feasible evaluations.
    assert [alt for _, alt in IMAGE.findall(text)] == [
        "convergence",
        "parameter importance",
        "partial dependence",
        "evaluations",
    ]
    assert "best feasible value found so far" in text
    section = text.split("<h2>Best feasible trial</h2>")[1].split("<h2>")[0]
    assert f'<td class="text">trial</td><td>{res.numbers[best]}</td>' in section
    assert f"{res.metrics[best]['error']:.6g}" in section
    trials = _trials_section(text)
    assert re.findall(r'<tr class="best"><td>(\d+)</td>', trials) == [str(res.numbers[best])]
    assert "<th>error</th><th>size</th><th>state</th><th>feasible</th>" in trials

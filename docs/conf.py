"""Sphinx configuration of treebo's documentation.

Build (from the repository root; ``-W`` turns warnings into errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The benchmark pages' tables and regret figures are generated from the files
in ``benchmarks/results/<experiment>/`` when the build starts:
see ``docs/_ext/results_tables.py``. The scripts in ``examples/`` whose names
start with ``plot_`` are run by sphinx-gallery; ``quickstart.py`` is shown
without being run (it takes longer than the build should).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
os.environ.setdefault("MPLBACKEND", "Agg")

import treebo  # noqa: E402

project = "treebo"
author = "treebo developers"
copyright = "treebo developers"  # noqa: A001 - Sphinx's name
release = treebo.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
# Everything the build writes into the source tree goes under generated/ (git-ignored):
# tables/ (included by the benchmark pages, not pages of their own), figures/, api/
# (autosummary's stub pages) and gallery/ (sphinx-gallery's pages of examples/).
exclude_patterns = ["_build", "generated/tables", "Thumbs.db", ".DS_Store"]

# -- MyST --------------------------------------------------------------------------------------
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

# -- API reference -----------------------------------------------------------------------------
autosummary_generate = True
autodoc_typehints = "none"  # numpydoc's Parameters sections carry the types
autodoc_member_order = "bysource"
numpydoc_show_class_members = False  # the class template lists members with autodoc
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
# Every parameter is documented (PR01) and every documented one exists (PR02); with -W
# a missing or stale one fails the build.
numpydoc_validation_checks = {"PR01", "PR02"}

# -- sphinx-gallery ----------------------------------------------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "generated/gallery",
    "filename_pattern": r"/plot_",  # run these; show the others (quickstart) as code
    "abort_on_example_error": True,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "image_scrapers": ("matplotlib",),
    "min_reported_time": 1,
    "show_memory": False,
    "write_computation_times": False,
}

# -- HTML --------------------------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"treebo {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_theme_options = {
    "description": "Bayesian optimization with tree ensembles that report honest uncertainty",
    "fixed_sidebar": True,
    "page_width": "1240px",
    "body_max_width": "none",
    "sidebar_width": "230px",
}
html_sidebars = {"**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]}


def _generate_tables(app) -> None:
    from results_tables import generate

    generate()


def setup(app):
    app.connect("builder-inited", _generate_tables)

"""Sphinx configuration of the allocopt documentation (``make docs``; warnings are errors)."""

from __future__ import annotations

import datetime
import os
import sys

sys.path.insert(0, os.path.abspath(".."))

import allocopt  # noqa: E402

project = "allocopt"
author = "the allocopt developers"
copyright = f"{datetime.date.today().year}, {author}"
release = allocopt.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 copied into the site (_static/mathjax), so that the mathematics renders without a network (the
    # default loads it from a CDN); the package sets mathjax_path to its local copy
    "sphinx-mathjax-offline",
    "sphinx.ext.viewcode",
    "numpydoc",
    "myst_parser",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "**/_generated_*"]

myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

# the source view links each object to the page of the module that defines it, never to one that re-exports it (a
# re-export documented first made viewcode link every class of the defining module to ids that do not exist)
viewcode_follow_imported_members = False

autodoc_typehints = "none"
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "show-inheritance": False}
autosummary_generate = False
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

html_theme = "furo"
html_title = f"allocopt {release}"


def _module_sections_as_rubrics(app, what, name, obj, options, lines):
    """Module docstrings use numpydoc-style section headings ("Examples" underlined by dashes); render them as
    rubrics so that the same heading in several modules does not make duplicate document labels."""
    if what != "module":
        return
    index = 0
    while index + 1 < len(lines):
        title, underline = lines[index], lines[index + 1]
        if title.strip() and underline.strip() and set(underline.strip()) == {"-"} and \
                len(underline.strip()) == len(title.strip()):
            lines[index:index + 2] = [f".. rubric:: {title.strip()}", ""]
        index += 1


def setup(app):
    app.connect("autodoc-process-docstring", _module_sections_as_rubrics, priority=400)

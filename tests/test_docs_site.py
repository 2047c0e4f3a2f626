"""The documentation site works offline and its local links hold (issue 32, part 5): docs/check_site.py, which
``make docs`` runs on the built site, and a one-page Sphinx build with the site's math extensions."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check_site = _load("check_site", DOCS / "check_site.py")

PAGE = """<html><head>{script}</head><body>
<h1 id="top">Title</h1><p><span class="math notranslate nohighlight">\\(x^2\\)</span></p>
{links}
</body></html>"""


def _site(tmp_path: Path, script: str, links: str = "") -> Path:
    (tmp_path / "_static" / "mathjax").mkdir(parents=True)
    (tmp_path / "_static" / "mathjax" / "tex-chtml.js").write_text("// MathJax", encoding="utf-8")
    (tmp_path / "index.html").write_text(PAGE.format(script=script, links=links), encoding="utf-8")
    (tmp_path / "other.html").write_text('<html><body><section id="present">x</section></body></html>',
                                         encoding="utf-8")
    return tmp_path


def test_a_site_with_local_mathjax_and_sound_links_passes(tmp_path):
    site = _site(tmp_path, '<script defer src="_static/mathjax/tex-chtml.js"></script>',
                 '<a href="other.html#present">a</a><a href="#top">b</a><a href="https://example.org/#x">c</a>')
    assert check_site.check_site(site) == []
    assert check_site.main([str(site)]) == 0


def test_mathjax_from_a_cdn_is_reported(tmp_path):
    site = _site(tmp_path, '<script defer src="https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js"></script>')
    problems = check_site.check_site(site)
    assert any("from the network" in problem for problem in problems)
    assert any("loads no MathJax from the site" in problem for problem in problems)
    assert check_site.main([str(site)]) == 1


def test_a_missing_local_script_is_reported(tmp_path):
    site = _site(tmp_path, '<script src="_static/mathjax/missing.js"></script>')
    assert any("not a file of the site" in problem for problem in check_site.check_site(site))


def test_broken_local_links_and_anchors_are_reported(tmp_path):
    site = _site(tmp_path, '<script src="_static/mathjax/tex-chtml.js"></script>',
                 '<a href="other.html#absent">a</a><a href="gone.html">b</a><a href="#nowhere">c</a>')
    problems = check_site.check_site(site)
    assert len(problems) == 3
    assert any("'absent'" in problem for problem in problems)
    assert any("gone.html: no such file" in problem for problem in problems)
    assert any("'nowhere'" in problem for problem in problems)


def test_a_sphinx_build_with_the_sites_math_extensions_renders_mathematics_offline(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    if importlib.util.find_spec("sphinx-mathjax-offline") is None:
        pytest.skip("the docs extra is not installed (pip install -e '.[docs]')")
    from sphinx.cmd.build import build_main

    conf = _load("docs_conf", DOCS / "conf.py")
    math_extensions = [name for name in conf.extensions if "math" in name or name == "myst_parser"]
    assert "sphinx-mathjax-offline" in math_extensions
    source = tmp_path / "source"
    source.mkdir()
    (source / "conf.py").write_text(f"extensions = {math_extensions!r}\n"
                                    f"myst_enable_extensions = {conf.myst_enable_extensions!r}\n", encoding="utf-8")
    (source / "index.md").write_text("# Page\n\nInline $C_{ij}(\\psi)$ and\n\n$$\\Gamma^* = \\max_\\psi 1$$\n",
                                     encoding="utf-8")
    site = tmp_path / "html"
    assert build_main(["-b", "html", "-q", "-W", str(source), str(site)]) == 0
    assert check_site.check_site(site) == []
    page = check_site.read_page(site / "index.html")
    assert page.has_math and any(src.endswith("mathjax/tex-chtml.js") for src in page.scripts)
    assert (site / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()

"""Check a built documentation site (``make docs`` runs it on docs/_build/html): it works offline, its links hold.

* **Mathematics offline.** No page loads MathJax (or any script) from the network: every ``<script src=...>`` is a
  file of the site, and every page with mathematics (elements of class ``math``) loads MathJax from the site.
* **Local links.** Every link to a page of the site (``href`` without a scheme) names a file that exists and, with a
  ``#fragment``, an element of that page whose ``id`` is the fragment.

Usage: ``python docs/check_site.py [SITE]`` (default docs/_build/html); prints each problem and exits 1 if any.
"""

from __future__ import annotations

import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

__all__ = ["Page", "read_page", "check_site", "main"]


class Page(HTMLParser):
    """The ids, links, scripts and whether there is mathematics in one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.scripts: list[str] = []
        self.has_math = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if "id" in values:
            self.ids.add(values["id"])
        if tag == "a" and "name" in values:
            self.ids.add(values["name"])
        if tag == "a" and "href" in values:
            self.links.append(values["href"])
        if tag == "script" and values.get("src"):
            self.scripts.append(values["src"])
        if "math" in values.get("class", "").split():
            self.has_math = True


def read_page(path: Path) -> Page:
    """Parse one page."""
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def _remote(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme) or url.startswith("//")


def _script_problems(path: Path, page: Page) -> list[str]:
    problems = [f"{path}: loads a script from the network: {src}" for src in page.scripts if _remote(src)]
    local = [src for src in page.scripts if not _remote(src)]
    for src in local:
        if not (path.parent / unquote(urlsplit(src).path)).is_file():
            problems.append(f"{path}: its script {src} is not a file of the site")
    if page.has_math and not any("mathjax" in src.lower() for src in local):
        problems.append(f"{path}: has mathematics but loads no MathJax from the site")
    return problems


def _link_problems(path: Path, page: Page, pages: dict[Path, Page]) -> list[str]:
    problems = []
    for href in page.links:
        parts = urlsplit(href)
        if _remote(href) or parts.scheme == "mailto":
            continue
        target = (path.parent / unquote(parts.path)).resolve() if parts.path else path.resolve()
        if parts.path and not target.exists():
            problems.append(f"{path}: link {href}: no such file")
            continue
        fragment = unquote(parts.fragment)
        if not fragment or target.suffix != ".html":
            continue
        other = pages.get(target)
        if other is None:
            other = pages[target] = read_page(target)
        if fragment not in other.ids:
            problems.append(f"{path}: link {href}: no element with id {fragment!r} in {target.name}")
    return problems


def check_site(site: Path) -> list[str]:
    """Every problem of the built site ``site`` (an empty list when it passes)."""
    files = sorted(site.rglob("*.html"))
    if not files:
        return [f"{site}: no HTML page (build the site first)"]
    pages = {path.resolve(): read_page(path) for path in files}
    problems = []
    for path in files:
        page = pages[path.resolve()]
        problems += _script_problems(path, page)
        problems += _link_problems(path, page, pages)
    return problems


def main(argv: list[str] | None = None) -> int:
    """Check the site named on the command line (default docs/_build/html); 0 when it passes, 1 otherwise."""
    arguments = sys.argv[1:] if argv is None else argv
    site = Path(arguments[0] if arguments else Path(__file__).parent / "_build" / "html")
    problems = check_site(site)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} problem(s) in the site {site}", file=sys.stderr)
        return 1
    print(f"site {site}: no script from the network, MathJax local, every local link and anchor found")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

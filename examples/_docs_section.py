"""Shared by the example scripts that write their measured tables into a page of docs/."""

from __future__ import annotations

from pathlib import Path


def write_marked_section(page: Path, begin: str, end: str, block: str, *, heading: str | None = None) -> None:
    """Put ``block`` (which starts with the marker ``begin`` and ends with ``end``) in place of the page's section
    between those markers, or append it to the page; a page that does not exist yet starts with ``heading``."""
    if page.exists():
        text = page.read_text()
    elif heading is not None:
        text = heading
    else:
        raise FileNotFoundError(page)
    if begin in text:
        before, rest = text.split(begin, 1)
        text = before + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    page.write_text(text)

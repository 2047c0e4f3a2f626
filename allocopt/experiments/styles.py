"""One colour and one marker per rule, the same in every figure.

Every registered rule name has a fixed style (:data:`RULE_STYLES`), so KKT-TS looks the same in the figures of
every experiment. A rule whose label is not a registered name takes the style of its rule name when no other rule of
the experiment has it (``"ugape (b)"``, UGapE's fixed-budget form, is drawn as UGapE), else the first style no rule
of the experiment uses, in the spec's order; so within an experiment no two rules share a style.

Examples
--------
>>> styles = rule_styles([("kkt-ts", "kkt-ts"), ("NSAR p=0.7", "nsar"), ("NSAR p=1.1", "nsar")])
>>> styles["kkt-ts"] == RULE_STYLES["kkt-ts"], styles["NSAR p=0.7"] == RULE_STYLES["nsar"]
(True, True)
>>> len(set(styles.values()))
3
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["RuleStyle", "RULE_STYLES", "rule_styles", "PALETTE"]


class RuleStyle(NamedTuple):
    """A colour (hex) and a matplotlib marker."""

    colour: str
    marker: str


_COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
            "#17becf", "#000000", "#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#984ea3",
            "#4daf4a", "#377eb8")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
PALETTE = tuple(RuleStyle(_COLOURS[index % len(_COLOURS)], _MARKERS[(index + index // len(_COLOURS)) % len(_MARKERS)])
                for index in range(len(_COLOURS) * len(_MARKERS)))
"""Distinct (colour, marker) pairs: 200 of them."""

# the registered rules, each with a fixed place in the palette (new rules go at the end: nothing moves)
_FIXED = ("kkt-ts", "dt-ts", "bts", "track-and-stop", "fwga-ts", "ocba-balanced", "ocba-unbalanced", "lucb", "kl-lucb",
          "kl-elimination", "ugape", "uniform", "lil-lucb", "lucb++", "lil-rand-lucb", "lil-clucb", "sar", "nsar",
          "successive-rejects", "sequential-halving", "at-lucb", "optmai", "adaptive-topk", "adaptive-topk-budget",
          "clucb-pac", "clucb-pac-budget", "ttts", "t3c", "ttei")
RULE_STYLES = {name: PALETTE[index] for index, name in enumerate(_FIXED)}
"""The fixed style of every registered rule name."""


def rule_styles(rules: list[tuple[str, str]]) -> dict[str, RuleStyle]:
    """The style of every rule of an experiment, given as ``(label, registered name)`` pairs in the spec's order."""
    styles: dict[str, RuleStyle] = {}
    labels = [label for label, _ in rules]
    names = [name for _, name in rules]
    for label, name in rules:
        if label in RULE_STYLES:
            styles[label] = RULE_STYLES[label]
        elif name in RULE_STYLES and name not in labels and names.index(name) == labels.index(label):
            styles[label] = RULE_STYLES[name]  # the first rule of that name, when none is labelled with the name
    used = set(styles.values())
    for label in labels:
        if label not in styles:
            styles[label] = next(style for style in PALETTE[len(_FIXED):] + PALETTE[:len(_FIXED)] if style not in used)
            used.add(styles[label])
    return styles

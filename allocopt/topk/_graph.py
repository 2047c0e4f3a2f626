"""Connected components of a graph given by its edge list: the one implementation the top-k layer uses (the
exact solver's forests, the certificate's support graph, the binding graph of :func:`~allocopt.topk.check_topk`).

Components are labelled in the order of their smallest node, as scipy's ``connected_components`` labels them,
whichever path computes them: union-find in Python for small graphs (where scipy's set-up costs more than the
work) and scipy's compressed sparse graph routine above :data:`SMALL_GRAPH` nodes.

Examples
--------
>>> import numpy as np
>>> connected_components(5, np.array([3, 0]), np.array([1, 4]))
Components(n_components=3, labels=array([0, 1, 2, 1, 0]))
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Components", "connected_components", "SMALL_GRAPH"]

SMALL_GRAPH = 400
"""Graphs with at most this many nodes are labelled by union-find (faster than scipy at this size)."""


class Components(NamedTuple):
    """The number of connected components and the component of each node (numbered by smallest node)."""

    n_components: int
    labels: np.ndarray


def _union_find_roots(n_nodes: int, ends_a: list[int], ends_b: list[int]) -> list[int]:
    parent = list(range(n_nodes))

    def find(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for a, b in zip(ends_a, ends_b):
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[root_a] = root_b
    return [find(node) for node in range(n_nodes)]


def connected_components(n_nodes: int, ends_a: np.ndarray, ends_b: np.ndarray) -> Components:
    """Connected components of the undirected graph on nodes ``0 .. n_nodes - 1`` with edges
    ``(ends_a[e], ends_b[e])`` (isolated nodes are components of their own)."""
    ends_a, ends_b = np.asarray(ends_a, dtype=int), np.asarray(ends_b, dtype=int)
    if n_nodes <= SMALL_GRAPH:
        roots = np.asarray(_union_find_roots(n_nodes, ends_a.tolist(), ends_b.tolist()), dtype=int)
        # a root's label is the rank of its component's smallest node: nodes are visited in increasing order,
        # so the first node met with a given root is its smallest
        _, first, root_label = np.unique(roots, return_index=True, return_inverse=True)
        rank = np.empty(first.shape[0], dtype=int)
        rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
        return Components(int(first.shape[0]), rank[root_label.ravel()])
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components as scipy_components

    adjacency = coo_matrix((np.ones(ends_a.shape[0]), (ends_a, ends_b)), shape=(n_nodes, n_nodes))
    count, labels = scipy_components(adjacency, directed=False)
    return Components(int(count), labels)

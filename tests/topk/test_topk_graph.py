"""Connected components of the top-k layer (allocopt.topk._graph): both paths against networkx."""

import networkx as nx
import numpy as np
import pytest

from allocopt.topk._graph import SMALL_GRAPH, connected_components


def _networkx_labels(n_nodes, ends_a, ends_b):
    # independent reference: networkx's components, numbered by their smallest node
    graph = nx.Graph()
    graph.add_nodes_from(range(n_nodes))
    graph.add_edges_from(zip(ends_a.tolist(), ends_b.tolist()))
    labels = np.empty(n_nodes, dtype=int)
    for label, nodes in enumerate(sorted(nx.connected_components(graph), key=min)):
        labels[list(nodes)] = label
    return labels


@pytest.mark.parametrize("n_nodes", [1, 7, 60, SMALL_GRAPH, SMALL_GRAPH + 1, 1500])
def test_components_equal_networkx_on_both_paths(n_nodes):
    rng = np.random.default_rng(n_nodes)
    for n_edges in (0, n_nodes // 3, n_nodes, 2 * n_nodes):
        ends_a, ends_b = rng.integers(0, n_nodes, n_edges), rng.integers(0, n_nodes, n_edges)
        components = connected_components(n_nodes, ends_a, ends_b)
        expected = _networkx_labels(n_nodes, ends_a, ends_b)
        assert components.n_components == expected.max() + 1
        assert np.array_equal(components.labels, expected)

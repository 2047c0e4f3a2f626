"""What the twin tests of the compiled run loops (uniform sampling, UGapE, KL-Racing, DT-TS and BTS,
Track-and-Stop) share: the Gaussian problems every loop runs on and the records they compare.

Each test file adds the problems of its own loop (Bernoulli arms, clustered means, ...) to :data:`GAUSSIAN_PROBLEMS`
and compares the engine's records of the compiled loop and of the numpy loop with :func:`assert_same_records`.
"""

from __future__ import annotations

import numpy as np

from allocopt import TopKProblem

GAUSSIAN_PROBLEMS = {
    # 20 equally spaced means, k = 5: many arms, the top set in the middle of a long run of close gaps
    "paper, 20 arms, k = 5": TopKProblem(1.0 - np.arange(20) / 20.0, 5, variance=0.25),
    # two equal means below the top set, per-arm variances: ties among the bottom arms, unequal radii
    "equal means, unequal variances": TopKProblem([1.0, 0.9, 0.5, 0.5, 0.0], 2, variance=[0.25, 1.0, 0.5, 0.3, 2.0]),
    # the extreme top-set sizes: best-arm identification and all arms but one
    "k = 1": TopKProblem([1.0, 0.8, 0.5, 0.2], 1, variance=1.0),
    "k = K - 1": TopKProblem([1.0, 0.8, 0.5, 0.2], 3, variance=1.0),
}
"""The Gaussian problems of every twin test, by name."""

RECORD_FIELDS = ("times", "recommendations", "stopped", "pulls", "steps", "replication_steps")
"""The engine's records that a compiled loop must reproduce bit for bit."""


def assert_same_records(fast, slow) -> None:
    """The records :data:`RECORD_FIELDS` of the compiled loop's run (``fast``) and the numpy loop's (``slow``) are
    equal, element for element."""
    for name in RECORD_FIELDS:
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name

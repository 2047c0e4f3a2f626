"""User code that ``make typecheck`` type-checks (it is not run by pytest): the public inputs accept array_like
values, as the README's examples pass them, and the stored fields are numpy arrays."""

import numpy as np

from allocopt import CBMAIProblem, TopKProblem, check_topk, solve_cbmai, solve_topk, solve_topk_batch

problem = CBMAIProblem([1.0, 0.6, 0.8, 0.3], [[0.5, 0.2, 1.4, 0.1]], [1.0])
rewards: np.ndarray = problem.rewards
known_from: int = problem.n_unknown
perturbed = problem.with_means(rewards=[1.0, 0.5, 0.8, 0.3])
lp_value: float = solve_cbmai(perturbed).value

topk = TopKProblem([0.51, 0.5, 0, -0.01, -0.092], k=2, variance=0.25)
psi: np.ndarray = solve_topk(topk).psi
passed: bool = check_topk(topk, psi.tolist()).passed
costs: np.ndarray = topk.costs([0.2, 0.2, 0.2, 0.2, 0.2])
batch = solve_topk_batch([[0.51, 0.5, 0.0, -0.01, -0.092]], 2, variance=[0.25] * 5)
statuses: list[str] = batch.status.tolist()

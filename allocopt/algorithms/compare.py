r"""Comparing sampling rules on one instance, paired by common random numbers.

Every rule runs with the same root entropy, so replication ``i`` of every rule reads the same reward streams
(:mod:`allocopt.algorithms.engine.rewards`): the n-th pull of arm ``a`` returns the same reward whichever rule
asked for it. Differences between two rules are then estimated from paired replications, whose standard
error is usually much smaller than that of the difference of two independent means.

For fixed confidence the paired difference of rule ``A`` against the reference ``R`` at confidence level
:math:`\delta` is, over the replications :math:`i = 1..n` that both ran,

.. math::
    \bar D = \frac1n \sum_i (\tau^A_i - \tau^R_i), \qquad
    \mathrm{se}(\bar D) = \frac{s_D}{\sqrt n},

with :math:`s_D` the sample standard deviation of the differences; for fixed budget the same is computed
on the error indicators at every budget.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from .._result import Result, omit_from_dict
from .._rng import RandomLike, root_entropy
from .._validation import as_int, fail
from ..simulate import check_n_jobs, paired_mean_difference
from ..topk.problem import TopKProblem
from .identify import identify, identify_fixed_budget
from .engine.protocol import get_policy, policy_name
from .results import FixedBudgetResult, IdentificationResult

__all__ = ["compare_policies", "PolicyComparison", "PairedDifference"]


@dataclass(frozen=True)
class PairedDifference:
    """Paired difference of one rule against the reference at one checkpoint.

    Attributes
    ----------
    policy, reference : str
        Labels of the two rules.
    checkpoint : float
        The confidence level (fixed confidence) or the budget (fixed budget).
    mean, standard_error : float
        Mean of the per-replication differences (stopping times, or error indicators) and its standard error.
    n_pairs : int
        Replications run by both rules.
    """

    policy: str
    reference: str
    checkpoint: float
    mean: float
    standard_error: float
    n_pairs: int


@dataclass(frozen=True, kw_only=True)
class PolicyComparison(Result):
    """Outcome of :func:`compare_policies` (status ``"completed"`` when every rule's experiment completed,
    else ``"incomplete"``: for example some run reached the sample cap).

    Attributes
    ----------
    setting : {"confidence", "budget"}
    labels : tuple of str
        The rules' labels, in the order given.
    reference : str
        The label the paired differences are taken against.
    results : dict of str to IdentificationResult or FixedBudgetResult
    entropy : int
        The root entropy shared by every rule.
    """

    SUCCESS_STATUSES: ClassVar[frozenset[str]] = frozenset({"completed"})

    setting: str
    labels: tuple[str, ...]
    reference: str
    results: dict[str, Any] = omit_from_dict()
    entropy: int

    def paired_differences(self) -> list[PairedDifference]:
        """Every rule against the reference, at every checkpoint (see the module docstring)."""
        base = self.results[self.reference]
        rows = []
        for label in self.labels:
            if label == self.reference:
                continue
            other = self.results[label]
            n_pairs = min(base.n_runs, other.n_runs)
            if self.setting == "confidence":
                values, reference_values, checkpoints = other.stopping_times, base.stopping_times, base.deltas
            else:
                values, reference_values, checkpoints = ~other.correct, ~base.correct, base.budgets
            for column, checkpoint in enumerate(checkpoints):
                paired = paired_mean_difference(values[:n_pairs, column], reference_values[:n_pairs, column])
                rows.append(PairedDifference(policy=label, reference=self.reference, checkpoint=float(checkpoint),
                                             mean=paired.mean, standard_error=paired.standard_error,
                                             n_pairs=paired.n_pairs))
        return rows

    def format_table(self) -> str:
        """A markdown table: one row per rule and checkpoint."""
        if self.setting == "confidence":
            lines = ["| policy | runs | delta | E[tau] | s.e. | error rate | 95% interval | E[tau]/(T* log 1/delta) |",
                     "|---|---|---|---|---|---|---|---|"]
            for label in self.labels:
                result = self.results[label]
                for row in result.summary():
                    bound = ">=" if row.censored else ""  # runs at the sample cap: E[tau] is censored
                    lines.append(f"| {label} | {result.n_runs} | {row.delta:g} | {bound}{row.mean_stopping_time:.1f} | "
                                 f"{row.standard_error:.1f} | {row.error_rate:.4f}{' (censored)' if bound else ''} | "
                                 f"[{row.error_low:.4f}, {row.error_high:.4f}] | {bound}{row.ratio:.3f} |")
        else:
            lines = ["| policy | runs | budget | error rate | 95% interval |", "|---|---|---|---|---|"]
            for label in self.labels:
                result = self.results[label]
                for row in result.summary():
                    lines.append(f"| {label} | {result.n_runs} | {row.budget} | {row.error_rate:.4f} | "
                                 f"[{row.error_low:.4f}, {row.error_high:.4f}] |")
        return "\n".join(lines)

    def _dict_extras(self) -> dict[str, Any]:
        return {"results": {label: self.results[label].to_dict() for label in self.labels},
                "paired_differences": self.paired_differences()}


def _labelled(policies: Any, func: str) -> list[tuple[str, Any]]:
    if isinstance(policies, Mapping):
        items = [(str(label), get_policy(policy, func)) for label, policy in policies.items()]
    elif isinstance(policies, Sequence) and not isinstance(policies, str):
        items = [(policy if isinstance(policy, str) else policy_name(get_policy(policy, func)),
                  get_policy(policy, func)) for policy in policies]
    else:
        fail(func, "policies", "a sequence of rules (names or objects) or a mapping from labels to rules", policies)
    labels = [label for label, _ in items]
    if not items or len(set(labels)) != len(labels):
        fail(func, "policies", "a non-empty collection of rules with distinct labels (use a mapping to label "
             "two configurations of one rule)", labels)
    return items


def compare_policies(problem: TopKProblem, policies: Any, *, delta: Any = (0.1, 0.01, 0.001),
                     budgets: Any = None, n_runs: int | Mapping[str, int] = 1, rng: RandomLike = None,
                     reference: str | None = None, n_jobs: int | None = None, progress: bool = False,
                     **options: Any) -> PolicyComparison:
    r"""Run several sampling rules on one instance with common random numbers and compare them.

    Parameters
    ----------
    problem : TopKProblem
    policies : sequence or mapping
        Rules (registered names or objects), or a mapping from labels to rules.
    delta : float or sequence of float
        Confidence levels (fixed confidence, when ``budgets`` is None).
    budgets : int or sequence of int, optional
        Budgets: run the fixed-budget setting (:func:`~allocopt.algorithms.identify_fixed_budget`).
    n_runs : int or mapping of label to int
        Replications per rule (the same for all, or per label). Paired differences use the replications
        both rules ran (the first ones: replication ``i`` is the same whatever ``n_runs``).
    rng : None, int, SeedSequence or Generator
        Root of the random streams, shared by every rule.
    reference : str, optional
        Label of the reference rule for the paired differences (default: the first).
    n_jobs, progress, **options
        Passed to :func:`~allocopt.algorithms.identify` or :func:`~allocopt.algorithms.identify_fixed_budget`
        (e.g. ``max_samples``, ``threshold``, ``chunk_size``).

    Returns
    -------
    PolicyComparison

    Examples
    --------
    >>> from allocopt import TopKProblem
    >>> problem = TopKProblem([1.0, 0.8, 0.2, 0.0], k=2, variance=0.25)
    >>> comparison = compare_policies(problem, ["kkt-ts", "uniform"], delta=0.01, n_runs=40, rng=5)
    >>> comparison.labels, comparison.status
    (('kkt-ts', 'uniform'), 'completed')
    >>> difference = comparison.paired_differences()[0]
    >>> difference.policy, difference.reference, difference.n_pairs
    ('uniform', 'kkt-ts', 40)
    """
    func = "compare_policies"
    started = time.perf_counter()
    items = _labelled(policies, func)
    labels = tuple(label for label, _ in items)
    if isinstance(n_runs, Mapping):
        missing = [label for label in labels if label not in n_runs]
        if missing:
            fail(func, "n_runs", "an integer or a mapping with an entry for every label (" + ", ".join(labels) + ")",
                 n_runs)
        runs = {label: as_int(n_runs[label], func, "n_runs", low=1) for label in labels}
    else:
        runs = {label: as_int(n_runs, func, "n_runs", low=1) for label in labels}
    if reference is None:
        reference = labels[0]
    elif reference not in labels:
        fail(func, "reference", "one of the labels (" + ", ".join(labels) + ")", reference)
    n_jobs = check_n_jobs(n_jobs, func)
    entropy = root_entropy(rng, func)
    setting = "confidence" if budgets is None else "budget"
    results: dict[str, IdentificationResult | FixedBudgetResult] = {}
    for label, rule in items:
        if setting == "confidence":
            results[label] = identify(problem, rule, delta=delta, n_runs=runs[label], rng=entropy, n_jobs=n_jobs,
                                      progress=progress, **options)
        else:
            results[label] = identify_fixed_budget(problem, rule, budgets, n_runs=runs[label], rng=entropy,
                                                   n_jobs=n_jobs, progress=progress, **options)
    complete = all(result.success for result in results.values())
    incomplete = [label for label in labels if not results[label].success]
    message = (f"{len(labels)} rules compared with common random numbers" if complete else
               "incomplete: " + ", ".join(f"{label} ({results[label].status})" for label in incomplete))
    return PolicyComparison(status="completed" if complete else "incomplete", message=message,
                            method="compare_policies", time=time.perf_counter() - started, setting=setting,
                            labels=labels, reference=reference, results=results, entropy=entropy)

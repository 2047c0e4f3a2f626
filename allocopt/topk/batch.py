r"""``solve_topk_batch``: the exact top-k solver on many instances at once.

A sequential algorithm run over many replications (Track-and-Stop, posterior-sampling rules) needs the
optimal allocation of every replication's current means at every step. :func:`solve_topk_batch` takes the
means of R instances sharing K, k, the family and the kind, and returns one certified answer per instance:

* Gaussian instances whose optimum is Theorem 3.4's double star (Wang, Yang, You 2022) - the typical case -
  are solved for all rows at once (:mod:`allocopt.topk._exact.gaussian_star`: a vectorised Newton iteration on
  the balance equation, peeled multipliers, a vectorised all-pairs check); rows whose double star fails its
  check are solved, again all together, on the forests the active set pivots to first
  (:func:`~allocopt.topk._exact.gaussian_star.gaussian_forest`);
* instances of the other families with a compiled pair kernel go through the exact solver's compiled double
  star and its compiled certificate (:mod:`allocopt.topk._exact.star`) row by row in one compiled call,
  without a problem or a result object per row; a row of distinct means certified optimal there is bit for
  bit the single solve's answer, and tied means are merged into groups first;
* every other instance (a row the double star does not certify, or a family without a compiled kernel) is
  solved by :func:`~allocopt.topk.solve_topk` with ``method="exact"``.

Each entry carries the same certificate as the single solve: :math:`\Gamma(\psi)` over all pairs, the upper
bound :math:`U(\mu, \psi) \ge \Gamma^*` of :mod:`allocopt.topk.certificate` and the certified gap. Rows whose
instance is undefined - the k-th and (k+1)-th largest means tied, as happens with empirical means, or means
outside the family's domain (an empirical Bernoulli mean of 0 or 1) - do not stop the batch: they are marked
``"invalid_instance"`` with NaN entries, and the result's ``messages`` say why.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from .._json import jsonable
from .._validation import as_choice, as_float, as_float_matrix, as_int, fail
from ..exceptions import AllocoptError, InvalidArgumentError
from ..families import ExponentialFamily, get_family
from ._exact.forest import gaussian_forest
from ._exact.gaussian_star import gaussian_double_star
from ..families.kernels import kernel_code
from ._exact.star import STAR_MAX_ITERATIONS, double_star_edges, star_batch_kernel
from ._exact._routing import FAST_PATH_PAIRS
from ._exact.search import _NEGATIVE_MULTIPLIER
from .certificate import certified_gap
from .problem import KINDS, TopKProblem, _readonly

__all__ = ["TopKBatchResult", "solve_topk_batch", "BATCH_STATUSES", "BATCH_TOL", "FAST_PATH_PAIRS"]

BATCH_STATUSES = ("optimal", "not_certified", "invalid_instance")
BATCH_TOL = 1e-9
r"""The default ``tol`` of :func:`solve_topk_batch`: a row is ``"optimal"`` when its certified gap is at most
``tol`` times its value :math:`\Gamma(\psi)` (also the tolerance of Track-and-Stop's compiled loop when the rule
leaves ``tol`` to the batch solver)."""
_OPTIMAL, _NOT_CERTIFIED, _INVALID = range(3)  # the row statuses as codes while a batch is solved
_STATUS_WORDS = np.array(BATCH_STATUSES)


@dataclass(frozen=True, kw_only=True)
class TopKBatchResult:
    r"""Solutions of R top-k instances, one row each.

    A batch is R results side by side rather than one result, so it does not derive from the shared core
    :class:`allocopt._result.Result`, whose ``status`` is one word: here ``status`` and ``success`` are per row
    (arrays, like every other per-instance field, so that a sequential algorithm can select the certified rows
    with a mask), and the per-row messages are :attr:`messages`. The other core fields are the batch's:
    ``message`` (a summary), ``method`` and ``time``. :meth:`to_dict` follows the core convention: the five
    core keys first, in the order of :data:`allocopt._result.CORE_FIELDS`, then the other fields, as strict
    JSON.

    Attributes
    ----------
    psi : ndarray, shape (R, K)
        Allocations (rows in the simplex; NaN for invalid instances).
    value : ndarray, shape (R,)
        :math:`\Gamma(\psi)` of each row, over all pairs.
    upper_bound : ndarray, shape (R,)
        :math:`U(\mu, \psi) \ge \Gamma^*` of each row.
    gap : ndarray, shape (R,)
        Certified optimality gaps (``upper_bound - value`` plus the rounding allowance).
    status : ndarray of str, shape (R,)
        ``"optimal"`` (certified relative gap at most ``tol``), ``"not_certified"`` or ``"invalid_instance"``.
    solved_individually : ndarray of bool, shape (R,)
        Rows solved one by one by :func:`~allocopt.topk.solve_topk` (the others by the vectorised or compiled
        double star).
    messages : tuple of str
        One message per row (empty for rows of the vectorised and compiled double-star paths).
    method, kind : str
        ``"exact"`` and the cost type.
    tol : float
        The relative gap requested for ``"optimal"``.
    time : float
        Wall-clock seconds for the whole batch.
    message : str
        Summary: how many rows took each path.
    """

    psi: np.ndarray
    value: np.ndarray
    upper_bound: np.ndarray
    gap: np.ndarray
    status: np.ndarray
    solved_individually: np.ndarray
    method: str
    kind: str
    tol: float
    time: float
    message: str = ""
    messages: tuple = field(default=(), repr=False)

    def __post_init__(self):
        for name in ("psi", "value", "upper_bound", "gap", "status", "solved_individually"):
            object.__setattr__(self, name, _readonly(getattr(self, name)))

    @property
    def success(self) -> np.ndarray:
        """Rows certified optimal (``status == "optimal"``)."""
        return self.status == "optimal"

    @property
    def relative_gap(self) -> np.ndarray:
        """``gap / value`` per row (infinite where the value is not positive)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.value > 0, self.gap / self.value, np.inf)

    @property
    def characteristic_time(self) -> np.ndarray:
        r""":math:`1/\Gamma(\psi)` per row, an upper bound on :math:`T^*`."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.value > 0, 1.0 / self.value, np.inf)

    def __len__(self) -> int:
        return int(self.psi.shape[0])

    def to_dict(self) -> dict[str, Any]:
        """A strict-JSON summary (non-finite numbers as ``"Infinity"``, ``"-Infinity"``, ``"NaN"``)."""
        return jsonable({  # the core keys first, in the order of CORE_FIELDS
            "status": self.status,
            "success": self.success,
            "message": self.message,
            "method": self.method,
            "time": self.time,
            "psi": self.psi,
            "value": self.value,
            "upper_bound": self.upper_bound,
            "gap": self.gap,
            "relative_gap": self.relative_gap,
            "solved_individually": self.solved_individually,
            "kind": self.kind,
            "tol": self.tol,
            "messages": list(self.messages),
        })


def _row_problems_valid(theta: np.ndarray, k: int, family: ExponentialFamily) -> tuple[np.ndarray, list[str]]:
    """Rows with means inside the family's domain and a unique top-k set, and one message per row: why the row
    is not valid (empty for valid rows; the reasons are formed only when some row is invalid)."""
    inside = np.all((theta > family.lower) & (theta < family.upper), axis=1)
    ordered = -np.partition(-theta, (k - 1, k), axis=1)  # the k-th and (k+1)-th largest means in place
    unique_top = ordered[:, k - 1] > ordered[:, k]
    valid = inside & unique_top
    messages = [""] * theta.shape[0]
    for row in np.flatnonzero(~valid).tolist():
        messages[row] = (f"means outside the {family.name} family's domain ({family.mean_requirement})"
                         if not inside[row] else
                         f"the {k}th and {k + 1}th largest means are tied (no unique top-{k} set)")
    return valid, messages


class _FamilyStars(NamedTuple):
    """The compiled double star of every row (arms in their original order) and the rows certified optimal
    (NaN entries elsewhere)."""

    psi: np.ndarray
    value: np.ndarray
    bound: np.ndarray
    gap: np.ndarray
    accepted: np.ndarray


def _pivoted_gaussian_rows(theta: np.ndarray, variance: np.ndarray, k: int, tol: float) -> _FamilyStars:
    """Gaussian rows (sorted, as for ``gaussian_double_star``) whose double star failed its check, solved on the
    forests the exact solver's active set pivots to first: the edge :math:`(i_k, j_1)` leaves (its multiplier is
    the one the double star's peeling can make negative), which splits the double star into the star of
    :math:`i_k` over the other bottom arms and the star of :math:`j_1` over the other top arms; if a pair is
    then violated, the most violated one enters when it joins the two trees. Each forest is solved for all its
    rows at once (:func:`~allocopt.topk._exact.gaussian_star.gaussian_forest`); a row is accepted only when its
    forest passes the exact checks and its certified relative gap is at most ``tol``. ``psi`` is in the sorted
    order; the other rows (NaN) are left to the single solve."""
    n_rows, n_arms = theta.shape
    psi = np.full((n_rows, n_arms), np.nan)
    value, bound, gap = np.full((3, n_rows), np.nan)
    accepted = np.zeros(n_rows, dtype=bool)

    def take(rows: np.ndarray, forest) -> None:
        forest_gap = certified_gap(forest.bound, forest.value)
        with np.errstate(invalid="ignore"):
            good = forest.accepted & (forest_gap <= tol * forest.value)
        chosen = rows[good]
        psi[chosen], value[chosen], bound[chosen] = forest.psi[good], forest.value[good], forest.bound[good]
        gap[chosen] = forest_gap[good]
        accepted[chosen] = True

    star_top, star_bottom = double_star_edges(k, n_arms)
    split_top, split_bottom = star_top[1:], k + star_bottom[1:]  # without (i_k, j_1), the first edge
    split = gaussian_forest(theta, variance, k, split_top, split_bottom)
    if split is None:
        return _FamilyStars(psi=psi, value=value, bound=bound, gap=gap, accepted=accepted)
    take(np.arange(n_rows), split)
    entering = np.flatnonzero(~split.accepted & split.nonnegative & ~split.feasible)
    pair_top, pair_bottom = np.divmod(split.weakest[entering], n_arms - k)
    pair_bottom += k
    joins = (pair_top != k - 1) & (pair_bottom != k)  # a top arm of j_1's tree with a bottom arm of i_k's
    pairs = np.stack([pair_top, pair_bottom], axis=1)[joins]
    for top, bottom in np.unique(pairs, axis=0).tolist():
        rows = entering[joins][(pairs[:, 0] == top) & (pairs[:, 1] == bottom)]
        forest = gaussian_forest(theta[rows], variance[rows] if variance.ndim == 2 else variance, k,
                                 np.append(split_top, top), np.append(split_bottom, bottom))
        if forest is not None:
            take(rows, forest)
    return _FamilyStars(psi=psi, value=value, bound=bound, gap=gap, accepted=accepted)


def _compiled_double_stars(theta: np.ndarray, dispersion: np.ndarray, k: int, kind: str, tol: float,
                           family: ExponentialFamily, code: int) -> _FamilyStars:
    r"""The exact solver's compiled fast path (``_exact._compiled_star_fast_path``) on every row, in one compiled
    call per tie pattern.

    A row of distinct means gets the single solve's kernel on the same sorted means and dispersions with the
    same start (0, no warm start), the same evaluation-error allowance and the same acceptance (solved,
    certified relative gap at most ``tol``), so an accepted row is bit for bit the single solve's answer.

    Tied means (empirical means of Bernoulli arms often are) are merged into groups as the active set merges
    them (:mod:`allocopt.topk._exact.groups`): a group of :math:`n_g` arms with a common weight :math:`w_g` costs
    :math:`n_g \phi_g w_g` in the objective, so the same kernel solves the grouped double star with
    dispersion :math:`n_g\phi_g`; its allocation of a group is the group's total, :math:`n_g\psi_a`, and its
    certificate is the arm-level one (:math:`w_g = n_g\psi_a / (n_g\phi_g)`, and each arm sum
    :math:`\sum_e \mu_e \partial_w C_e / (n_g\phi_g)` is that of a member when every member carries
    :math:`1/n_g` of its group's multipliers, as the active set spreads them). These rows agree with the
    single solve (which reaches the same forest by the active set) to rounding, not bit for bit; one more
    rounding term (the division by :math:`n_g`) enters their allowance. Tied arms of different dispersions are
    left to the single solve."""
    n_rows, n_arms = theta.shape
    order = np.argsort(-theta, axis=1, kind="stable")  # TopKProblem's top then bottom arms
    index = np.arange(n_rows)[:, None]
    sorted_theta = theta[index, order]
    sorted_dispersion = dispersion[order]
    new_group = np.ones((n_rows, n_arms), dtype=bool)
    new_group[:, 1:] = sorted_theta[:, 1:] != sorted_theta[:, :-1]
    new_group[:, k] = True  # (valid rows: the k-th and (k+1)-th means differ)
    groupable = np.all(new_group | (sorted_dispersion == np.roll(sorted_dispersion, 1, axis=1)), axis=1)
    n_groups, n_top_groups = new_group.sum(axis=1), new_group[:, :k].sum(axis=1)
    group_of = np.cumsum(new_group, axis=1) - 1
    multiplicity = np.zeros((n_rows, n_arms))
    np.add.at(multiplicity, (np.broadcast_to(index, group_of.shape), group_of), 1.0)
    psi = np.full((n_rows, n_arms), np.nan)
    value, bound, gap = np.full((3, n_rows), np.nan)
    accepted = np.zeros(n_rows, dtype=bool)
    signatures = np.unique(np.stack([n_groups, n_top_groups], axis=1)[groupable], axis=0)
    for groups, top_groups in signatures.tolist():
        rows = np.flatnonzero(groupable & (n_groups == groups) & (n_top_groups == top_groups))
        first = new_group[rows]
        count = multiplicity[rows, :groups]
        group_theta = np.ascontiguousarray(sorted_theta[rows][first].reshape(rows.size, groups))
        group_dispersion = np.ascontiguousarray(sorted_dispersion[rows][first].reshape(rows.size, groups) * count)
        group_psi, mu = np.empty((rows.size, groups)), np.empty((rows.size, groups - 1))
        keep, out = np.empty((rows.size, groups - 1), dtype=np.bool_), np.empty((rows.size, 7))
        star_batch_kernel()(code, group_theta, group_dispersion, top_groups, STAR_MAX_ITERATIONS, _NEGATIVE_MULTIPLIER,
                            group_psi, mu, keep, out)
        value[rows], bound[rows] = out[:, 1], out[:, 2]
        terms = out[:, 5] + (0 if groups == n_arms else 1)
        for position in np.flatnonzero(out[:, 0] == 1.0).tolist():  # the single solve's allowance
            row = rows[position]
            gap[row] = certified_gap(float(bound[row]), float(value[row]),
                                     float(family.pair_error_bound(kind, theta[row])), int(terms[position]))
        # each arm's share of its group's allocation (exactly the group's when the group is one arm)
        arm_psi = (group_psi / count)[np.arange(rows.size)[:, None], group_of[rows]]
        psi[rows[:, None], order[rows]] = arm_psi
        accepted[rows] = out[:, 0] == 1.0
    with np.errstate(invalid="ignore"):
        accepted &= (value > 0) & (gap <= tol * value)
    return _FamilyStars(psi=psi, value=value, bound=bound, gap=gap, accepted=accepted)


@dataclass
class _Answers:
    """The batch's answers, row by row, filled by each route in turn (status: codes into
    :data:`BATCH_STATUSES`, turned into words at the end)."""

    psi: np.ndarray
    value: np.ndarray
    bound: np.ndarray
    gap: np.ndarray
    status: np.ndarray
    individually: np.ndarray
    messages: list[str]

    @classmethod
    def empty(cls, n_rows: int, n_arms: int, messages: list[str]) -> "_Answers":
        return cls(psi=np.full((n_rows, n_arms), np.nan), value=np.full(n_rows, np.nan),
                   bound=np.full(n_rows, np.nan), gap=np.full(n_rows, np.nan),
                   status=np.full(n_rows, _INVALID, dtype=np.int8), individually=np.zeros(n_rows, dtype=bool),
                   messages=messages)


def _gaussian_rows(answers: _Answers, theta: np.ndarray, remaining: np.ndarray, k: int, dispersion: np.ndarray,
                   heteroscedastic: bool, tol: float, warm: np.ndarray | None) -> np.ndarray:
    """Harmonic costs (Gaussian arms): the double star of Theorem 3.4 in closed form, vectorised over the
    ``remaining`` rows, then the exact solver's first pivots from it on the rows it declines; returns the rows
    left to the single solve."""
    n_arms = theta.shape[1]
    order = np.argsort(-theta[remaining], axis=1, kind="stable")  # top then bottom, as TopKProblem orders
    index = np.arange(remaining.size)[:, None]
    sorted_theta = theta[remaining][index, order]
    sorted_variance = dispersion[order] if heteroscedastic else dispersion[:1]
    start = None
    if warm is not None:  # the previous allocation's split y = log(x_{i_k} / x_{j_1}), x = sigma^2 / psi
        previous = warm[remaining][index, order]
        with np.errstate(divide="ignore", invalid="ignore"):
            start = np.log(previous[:, k] / previous[:, k - 1] * (sorted_variance[..., k - 1] if
                           sorted_variance.ndim == 2 else 1.0) / (sorted_variance[..., k] if
                           sorted_variance.ndim == 2 else 1.0))
        start = np.where(np.isfinite(start), start, 0.0)
    psi, value, bound, gap, status = answers.psi, answers.value, answers.bound, answers.gap, answers.status
    # rows in chunks, so that the cost matrices of a chunk hold about 2^21 pairs
    chunk = max(1, (1 << 21) // (k * (n_arms - k)))
    accepted = np.zeros(remaining.size, dtype=bool)
    for begin in range(0, remaining.size, chunk):
        part = slice(begin, begin + chunk)
        star = gaussian_double_star(sorted_theta[part], sorted_variance[part] if sorted_variance.ndim == 2
                                    else sorted_variance, k, None if start is None else start[part])
        accepted[part] = star.accepted
        rows = remaining[part][star.accepted]
        psi[rows[:, None], order[part][star.accepted]] = star.psi[star.accepted]
        value[rows] = star.value[star.accepted]
        bound[rows] = star.bound[star.accepted]
        gap[rows] = certified_gap(star.bound[star.accepted], star.value[star.accepted])
        status[rows] = np.where(gap[rows] <= tol * value[rows], _OPTIMAL, _NOT_CERTIFIED)
    failed = np.flatnonzero(~accepted)
    for begin in range(0, failed.size if k >= 2 and n_arms - k >= 2 else 0, chunk):
        # the exact solver's first pivots from the double star, on those rows together (in chunks as above)
        block = failed[begin:begin + chunk]
        pivoted = _pivoted_gaussian_rows(sorted_theta[block], sorted_variance[block] if sorted_variance.ndim
                                         == 2 else sorted_variance, k, tol)
        done = block[pivoted.accepted]
        rows = remaining[done]
        psi[rows[:, None], order[done]] = pivoted.psi[pivoted.accepted]
        value[rows], bound[rows] = pivoted.value[pivoted.accepted], pivoted.bound[pivoted.accepted]
        gap[rows] = pivoted.gap[pivoted.accepted]
        status[rows] = _OPTIMAL
        accepted[done] = True
    return remaining[~accepted]


def _family_rows(answers: _Answers, theta: np.ndarray, remaining: np.ndarray, k: int, dispersion: np.ndarray,
                 kind: str, tol: float, family: ExponentialFamily) -> np.ndarray:
    """Other families with a compiled pair kernel: the exact solver's compiled double star, row by row in one
    compiled call; the rows it certifies optimal are final, the others (returned) go to the single solve."""
    code = kernel_code(family.compiled_pair(kind))
    if code is None:
        return remaining
    stars = _compiled_double_stars(theta[remaining], dispersion, k, kind, tol, family, code)
    rows = remaining[stars.accepted]
    answers.psi[rows] = stars.psi[stars.accepted]
    answers.value[rows], answers.bound[rows] = stars.value[stars.accepted], stars.bound[stars.accepted]
    answers.gap[rows] = stars.gap[stars.accepted]
    answers.status[rows] = _OPTIMAL
    return remaining[~stars.accepted]


def _individual_rows(answers: _Answers, theta: np.ndarray, remaining: np.ndarray, k: int, kind: str, tol: float,
                     family: ExponentialFamily) -> None:
    """The rows no batched route certified, each by :func:`~allocopt.topk.solve_topk` (an instance the exact
    solver cannot handle is reported in its row's message, not raised)."""
    if not remaining.size:
        return
    from .solve import solve_topk

    for row in remaining.tolist():
        answers.individually[row] = True
        try:
            result = solve_topk(TopKProblem(theta[row], k, family=family), method="exact", kind=kind, tol=tol)
        except AllocoptError as error:
            if isinstance(error, InvalidArgumentError):
                raise
            answers.status[row] = _NOT_CERTIFIED
            answers.messages[row] = str(error)
            continue
        answers.psi[row], answers.value[row] = result.psi, result.value
        answers.bound[row], answers.gap[row] = result.upper_bound, result.gap
        answers.status[row] = _OPTIMAL if result.status == "optimal" else _NOT_CERTIFIED
        answers.messages[row] = result.message


def solve_topk_batch(theta: ArrayLike, k: int, family: str | ExponentialFamily = "gaussian",
                     variance: ArrayLike = 1.0, kind: str = "confidence", tol: float = BATCH_TOL,
                     warm_start: ArrayLike | None = None) -> TopKBatchResult:
    r"""Solve R top-k allocation problems :math:`\max_{\psi} \min_{i,j} C_{ij}(\psi)` exactly, with one
    certificate per instance.

    Parameters
    ----------
    theta : array_like, shape (R, K)
        The means, one instance per row (finite; K >= 2).
    k : int
        Size of the top set, ``1 <= k <= K-1`` (the same for every row).
    family : str or ExponentialFamily, default "gaussian"
        The reward family of every row.
    variance : float or array_like of shape (K,), default 1.0
        Gaussian variance (one value or one per arm, shared by the rows).
    kind : {"confidence", "budget"}
        Costs :math:`C_{ij}` or :math:`B_{ij}` (identical for Gaussian arms).
    tol : float, default :data:`BATCH_TOL` (1e-9)
        Certified relative gap below which a row is ``"optimal"``.
    warm_start : array_like of shape (R, K), optional
        Previous allocations (for example the previous step's ``psi``); positive rows start the Gaussian
        balance iteration at their split. The answer does not depend on it.

    Returns
    -------
    TopKBatchResult
        Arrays ``psi`` (R, K), ``value``, ``upper_bound``, ``gap``, ``status`` (R,), and the timing.

    Examples
    --------
    >>> import numpy as np
    >>> theta = np.array([[0.51, 0.5, 0.0, -0.01, -0.092], [1.0, 0.2, 0.6, 0.1, 0.5]])
    >>> batch = solve_topk_batch(theta, 2, variance=0.25)
    >>> batch.status.tolist()
    ['optimal', 'optimal']
    >>> round(float(batch.value[0]), 4)  # Example 1 of Wang, Yang, You (2022)
    0.0568
    """
    started = time.perf_counter()
    func = "solve_topk_batch"
    theta = as_float_matrix(theta, func, "theta")
    n_rows, n_arms = theta.shape
    if n_arms < 2:
        fail(func, "theta", "a two-dimensional array with at least 2 columns (arms)", theta)
    k = as_int(k, func, "k", low=1, high=n_arms - 1, requirement=f"an integer in 1..K-1 = 1..{n_arms - 1}")
    resolved = get_family(family, variance=variance, func=func)
    dispersion = resolved.arm_dispersion(n_arms, func)
    kind = as_choice(kind, func, "kind", KINDS)
    tol = as_float(tol, func, "tol", low=0.0)
    warm = None
    if warm_start is not None:
        warm = as_float_matrix(warm_start, func, "warm_start", shape=(n_rows, n_arms))
    valid, messages = _row_problems_valid(theta, k, resolved)
    answers = _Answers.empty(n_rows, n_arms, messages)
    remaining = np.flatnonzero(valid)
    if remaining.size and k * (n_arms - k) <= FAST_PATH_PAIRS:
        if resolved.harmonic_costs(kind):
            remaining = _gaussian_rows(answers, theta, remaining, k, dispersion, resolved.is_heteroscedastic, tol, warm)
        else:
            remaining = _family_rows(answers, theta, remaining, k, dispersion, kind, tol, resolved)
    _individual_rows(answers, theta, remaining, k, kind, tol, resolved)
    psi, value, bound, gap, status, individually = (answers.psi, answers.value, answers.bound, answers.gap,
                                                     answers.status, answers.individually)
    n_individual = int(individually.sum())
    n_invalid = int((~valid).sum())
    message = (f"exact batch: {n_rows - n_individual - n_invalid} instance(s) solved together, "
               f"{n_individual} instance(s) solved one by one, {n_invalid} invalid instance(s)")
    return TopKBatchResult(psi=psi, value=value, upper_bound=bound, gap=gap, status=_STATUS_WORDS[status],
                           solved_individually=individually, method="exact", kind=kind, tol=tol,
                           time=time.perf_counter() - started, message=message, messages=tuple(answers.messages))

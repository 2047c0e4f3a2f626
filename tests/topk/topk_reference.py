"""Independent high-precision (mpmath, 120 working digits) evaluations of the top-k pair costs and of Gamma*, for the precision tests.

Everything here follows the definitions of Wang, Yang, You (2022) directly, in mpmath at 50 digits, with no
allocopt code:

* divergences d(x, y) = KL(P_x || P_y) of the four families (their closed forms);
* C_ij(w) = inf_x [w_i d(theta_i, x) + w_j d(theta_j, x)], attained at the weighted mean m;
* B_ij(w) = inf_x [w_i d(x, theta_i) + w_j d(x, theta_j)], attained at x = A'(weighted natural parameter)
  (problem (11));
* the gradients by the envelope theorem (d(theta_a, m) and d(x, theta_a)), the second derivatives by the
  chain rule applied to them;
* Gamma* for k = 1 and k = K - 1 (every pair shares the lone arm) by solving the KKT system (65) of
  Theorem 3.5 by Newton's method in 50 digits (:func:`mp_star_optimum`).
"""

from __future__ import annotations

import mpmath

# 50 significant digits in every result: the textbook forms of the divergences cancel up to ~2 |log10 r| digits
# for nearly equal arguments (relative differences r down to ~1e-25 on the grids), hence 120 working digits
DPS = 120


def mp_kl(family: str, x, y):
    """KL(P_x || P_y) for unit dispersion (Gaussian variance 1)."""
    if family == "gaussian":
        return (x - y) ** 2 / 2
    if family == "bernoulli":
        return x * mpmath.log(x / y) + (1 - x) * mpmath.log((1 - x) / (1 - y))
    if family == "poisson":
        return y - x + x * mpmath.log(x / y)
    if family == "exponential":
        return x / y - 1 - mpmath.log(x / y)
    raise ValueError(family)


def mp_natural(family: str, x):
    """Natural parameter eta(x) (unit dispersion)."""
    return {"gaussian": lambda: x, "bernoulli": lambda: mpmath.log(x / (1 - x)), "poisson": lambda: mpmath.log(x),
            "exponential": lambda: -1 / x}[family]()


def mp_mean(family: str, eta):
    """Inverse link A'(eta)."""
    return {"gaussian": lambda: eta, "bernoulli": lambda: 1 / (1 + mpmath.exp(-eta)),
            "poisson": lambda: mpmath.exp(eta), "exponential": lambda: -1 / eta}[family]()


def mp_point(family: str, kind: str, theta_i, theta_j, w_i, w_j):
    """The infimum point of the pair cost (closed form)."""
    if kind == "confidence":
        return (w_i * theta_i + w_j * theta_j) / (w_i + w_j)
    eta = (w_i * mp_natural(family, theta_i) + w_j * mp_natural(family, theta_j)) / (w_i + w_j)
    return mp_mean(family, eta)


def mp_pair(family: str, kind: str, theta_i, theta_j, w_i, w_j):
    """(cost, d cost/d w_i, d cost/d w_j) in 50 digits (inputs are converted exactly from floats)."""
    with mpmath.workdps(DPS):
        theta_i, theta_j, w_i, w_j = (mpmath.mpf(value) for value in (theta_i, theta_j, w_i, w_j))
        point = mp_point(family, kind, theta_i, theta_j, w_i, w_j)
        if kind == "confidence":
            grad_i, grad_j = mp_kl(family, theta_i, point), mp_kl(family, theta_j, point)
        else:
            grad_i, grad_j = mp_kl(family, point, theta_i), mp_kl(family, point, theta_j)
        return w_i * grad_i + w_j * grad_j, grad_i, grad_j


def mp_variance(family: str, x):
    """Unit variance function V(x) = A''(eta(x))."""
    return {"gaussian": lambda: mpmath.mpf(1), "bernoulli": lambda: x * (1 - x), "poisson": lambda: x,
            "exponential": lambda: x * x}[family]()


def mp_hessian(family: str, kind: str, theta_i, theta_j, w_i, w_j):
    """(d2/dw_i2, d2/dw_i dw_j, d2/dw_j2) of the pair cost: the chain rule applied to the envelope gradients.

    Confidence: d/dw_b d(theta_a, m) = (m - theta_a)/V(m) * dm/dw_b with dm/dw_b = (theta_b - m)/s, so the
    entries are -(theta_a - m)(theta_b - m)/(V(m) s). Budget: d/dw_b d(x, theta_a) = (eta(x) - eta_a) V(x)
    d eta_bar/dw_b with d eta_bar/dw_b = (eta_b - eta_bar)/s, so -V(x)(eta_a - eta_bar)(eta_b - eta_bar)/s.
    (A numerical derivative is useless here: the second derivatives can be 1e-230 times the gradients.)
    """
    with mpmath.workdps(DPS):
        theta_i, theta_j, w_i, w_j = (mpmath.mpf(value) for value in (theta_i, theta_j, w_i, w_j))
        total = w_i + w_j
        point = mp_point(family, kind, theta_i, theta_j, w_i, w_j)
        if kind == "confidence":
            scale = 1 / (mp_variance(family, point) * total)
            first, second = theta_i - point, theta_j - point
        else:
            scale = mp_variance(family, point) / total
            natural = (w_i * mp_natural(family, theta_i) + w_j * mp_natural(family, theta_j)) / total
            first, second = mp_natural(family, theta_i) - natural, mp_natural(family, theta_j) - natural
        return -scale * first * first, -scale * first * second, -scale * second * second


def mp_star_optimum(family: str, kind: str, theta, k: int, seed=None):
    """(Gamma*, psi*) for k = 1 or k = K - 1, in 50 digits, by solving the KKT system (65) in mpmath.

    With one arm on its side (the lone arm a), every pair contains a and every other arm b_l lies in exactly
    one pair, so at the optimum every pair is binding (Proposition 3.1) and the multipliers follow from the
    stationarity of the other arms, mu_l = Gamma*/dC_l/dpsi_(b_l). The lone arm's stationarity then reads
    sum_l (dC_l/dpsi_a)/(dC_l/dpsi_(b_l)) = 1. With psi_a = 1 and t_l = log(psi_(b_l)) (costs are
    1-homogeneous) the unknowns t solve the K - 1 equations {C_l = C_1 (l > 1), that sum = 1} by Newton's method
    (mpmath.findroot); the multipliers are positive, so the KKT point is the optimum of the concave problem
    (Theorem 3.5), and Gamma* = C_1(psi)/sum(psi). ``seed`` (a float allocation) only chooses Newton's start;
    the answer is checked by its residual.
    """
    with mpmath.workdps(DPS):
        theta_mp = [mpmath.mpf(value) for value in theta]
        n_arms = len(theta_mp)
        order = sorted(range(n_arms), key=lambda index: -theta_mp[index])
        if k == 1:
            lone, others = order[0], order[1:]
        elif k == n_arms - 1:
            lone, others = order[-1], order[:-1]
        else:
            raise ValueError("k must be 1 or K - 1")

        def terms(other, w_lone, w_other):
            """(cost, d/d lone, d/d other) of the pair of the lone arm with `other`."""
            if k == 1:
                return mp_pair(family, kind, theta_mp[lone], theta_mp[other], w_lone, w_other)
            cost, grad_other, grad_lone = mp_pair(family, kind, theta_mp[other], theta_mp[lone], w_other, w_lone)
            return cost, grad_lone, grad_other

        def equations(*logs):
            weights = [mpmath.exp(value) for value in logs]
            values = [terms(other, 1, weight) for other, weight in zip(others, weights)]
            first = values[0][0]
            balance = sum(grad_lone / grad_other for _, grad_lone, grad_other in values) - 1
            return [value[0] / first - 1 for value in values[1:]] + [balance]

        starts = []
        if seed is not None and min(seed) > 0:
            starts.append([mpmath.log(mpmath.mpf(seed[other]) / mpmath.mpf(seed[lone])) for other in others])
        starts.append([mpmath.mpf(0)] * len(others))
        last_error = None
        for start in starts:
            try:
                if len(others) == 1:
                    root = mpmath.findroot(lambda value: equations(value)[0], start[0], tol=mpmath.mpf(10) ** -40,
                                           maxsteps=200)
                else:
                    root = mpmath.findroot(equations, start, tol=mpmath.mpf(10) ** -40, maxsteps=200)
            except (ValueError, ZeroDivisionError) as error:  # no convergence from this start
                last_error = error
                continue
            logs = list(root) if len(others) > 1 else [root]
            residual = max(abs(value) for value in equations(*logs))
            if residual > mpmath.mpf(10) ** -30:
                continue
            weights = [mpmath.exp(value) for value in logs]
            total = 1 + sum(weights)
            psi = [mpmath.mpf(0)] * n_arms
            psi[lone] = 1 / total
            for other, weight in zip(others, weights):
                psi[other] = weight / total
            return terms(others[0], 1, weights[0])[0] / total, psi
        raise AssertionError(f"the 50-digit KKT system did not converge ({last_error})")


def mp_gamma(family: str, kind: str, theta, k: int, psi):
    """Gamma(psi) = min over (top, bottom) pairs of the pair cost, in 50 digits."""
    with mpmath.workdps(DPS):
        theta_mp = [mpmath.mpf(value) for value in theta]
        order = sorted(range(len(theta)), key=lambda index: -theta_mp[index])
        values = [mp_pair(family, kind, theta[i], theta[j], psi[i], psi[j])[0]
                  for i in order[:k] for j in order[k:]]
        return min(values)

"""One-parameter exponential families in mean parameterisation: one module per family (:mod:`.gaussian`,
:mod:`.bernoulli`, :mod:`.poisson`, :mod:`.exponential` with the gamma family beside it), their common base
(:mod:`.base`, where the mathematics of every family is described) and the table of their compiled scalar kernels
(:mod:`.kernels`)."""

from __future__ import annotations

import numpy as np

from ..exceptions import InvalidArgumentError
from .._validation import describe, fail
from .base import ArrayLike, ConicPerspective, ExponentialFamily, PairDivergences, log1pmx
from .bernoulli import Bernoulli
from .exponential import Exponential, Gamma
from .gaussian import Gaussian
from .poisson import Poisson

__all__ = [
    "ExponentialFamily",
    "Gaussian",
    "Bernoulli",
    "Poisson",
    "Exponential",
    "Gamma",
    "FAMILIES",
    "get_family",
    "log1pmx",
    "PairDivergences",
    "ConicPerspective",
]


FAMILIES: dict[str, type[ExponentialFamily]] = {
    cls.name: cls for cls in (Gaussian, Bernoulli, Poisson, Exponential, Gamma)
}


def get_family(family: str | ExponentialFamily, variance: float | ArrayLike | None = None,
               func: str = "get_family") -> ExponentialFamily:
    """Resolve a family name (with its variance for ``"gaussian"``) or pass a family object through.

    Parameters
    ----------
    family : str or ExponentialFamily
        One of ``"gaussian"``, ``"bernoulli"``, ``"poisson"``, ``"exponential"``, or a family object (for
        example ``Gamma(shape=3)``, whose shape a name cannot carry).
    variance : float or array_like, optional
        Gaussian variance (scalar or one per arm; default 1). Other families have no variance parameter:
        passing a value other than ``None`` or ``1.0`` with them is an error, as is passing one together with a
        family object.
    func : str
        Name of the calling public function, used in error messages.

    Examples
    --------
    >>> get_family("gaussian", variance=0.25)
    Gaussian(variance=0.25)
    >>> get_family(Gamma(shape=3.0))
    Gamma(shape=3)
    """
    if isinstance(family, ExponentialFamily):
        if variance is not None and not (np.ndim(variance) == 0 and float(variance) == 1.0):
            raise InvalidArgumentError(
                f"The 'variance' parameter of {func} must be left at its default when 'family' is a family "
                f"object (the object carries its own variance). Got {describe(variance)} instead."
            )
        return family
    if not isinstance(family, str) or family.lower() not in FAMILIES:
        fail(func, "family", "one of " + ", ".join(repr(name) for name in FAMILIES) + " or an ExponentialFamily object",
             family)
    cls = FAMILIES[family.lower()]
    if cls is Gamma:
        fail(func, "family", "a family whose parameters are known from its name: the gamma family needs its shape, "
             "pass allocopt.families.Gamma(shape=...)", family)
    if cls is Gaussian:
        return Gaussian(1.0 if variance is None else variance)
    if variance is not None and not (type(variance) is float and variance == 1.0) and not (  # the default first
            np.ndim(variance) == 0 and np.isfinite(float(variance)) and float(variance) == 1.0):
        raise InvalidArgumentError(
            f"The 'variance' parameter of {func} applies to the gaussian family only; the {cls.name} family "
            f"has its variance fixed by its mean. Got {describe(variance)} instead."
        )
    return cls()

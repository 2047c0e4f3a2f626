"""One object of every reward family, for suites parametrised over families (this package's and others').

A family name carries no parameters, so families with one (the Gaussian variance, the gamma shape) need an
object; :data:`REFERENCE_FAMILIES` fixes one per family so that a test parametrised by name covers all of
them, the gamma family included.
"""

from __future__ import annotations

from ..families import FAMILIES, Bernoulli, ExponentialFamily, Exponential, Gamma, Gaussian, Poisson

__all__ = ["REFERENCE_FAMILIES", "reference_family"]

REFERENCE_FAMILIES: dict[str, ExponentialFamily] = {
    "gaussian": Gaussian(1.0),
    "bernoulli": Bernoulli(),
    "poisson": Poisson(),
    "exponential": Exponential(),
    "gamma": Gamma(shape=3.0),
}
"""One object per registered family name (unit variance; gamma shape 3)."""

assert set(REFERENCE_FAMILIES) == set(FAMILIES), "every registered family needs a reference object"


def reference_family(name: str) -> ExponentialFamily:
    """The reference object of the family ``name`` (see :data:`REFERENCE_FAMILIES`).

    Examples
    --------
    >>> reference_family("gamma")
    Gamma(shape=3)
    """
    return REFERENCE_FAMILIES[name]

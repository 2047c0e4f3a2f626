"""Plain functions for tests/test_compile_once.py, loaded there as a fresh module by each test: numba caches
(``cache=True``) only functions defined in a file, and each test needs globals that no other test has rebound."""


def _half(x):
    return 0.5 * x


def _sum_of_halves(values):
    total = 0.0
    for value in values:
        total += _half(value)  # by its global name: the compiled _half once rebound
    return total


def _reciprocal(x):
    return 1.0 / x

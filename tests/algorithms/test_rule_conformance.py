"""Every registered rule passes allocopt.testing.check_rule: the compiled step against the rule's specification
(whole runs, compiled loop against the Python ``select`` with the compiled kernels off), batched against scalar,
invariance under chunking and threads, and its declared traits. The default suite runs each rule on the first
reference problem it accepts; the slow suite on all of them."""

from __future__ import annotations

import pytest

from allocopt.algorithms import POLICIES
from allocopt.exceptions import AllocoptError
from allocopt.testing.rules import RULE_PROBLEMS, check_rule


SLOW_TO_CONFORM = {"fwga-ts"}
"""Rules whose Python path solves at every step (FWGA-TaS: 200 FWGA iterations per step, about 500 s for the
checks on one problem on 2 cores): checked by the slow suite only (the test below on every reference problem)."""

LOG_ON_GAUSSIAN_PATH = {"ttei"}
"""Rules whose Gaussian step calls log or exp (TTEI: the log expected improvements): compared stepwise on Gaussian
problems too (check_rule's exact=False); the other rules' Gaussian steps are arithmetic, tables computed by numpy for
both paths and scipy.special's functions, so they are compared bit for bit there."""


@pytest.mark.twin
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.slow) if name in SLOW_TO_CONFORM else name
                                  for name in sorted(POLICIES)])
def test_every_registered_rule_conforms_on_one_problem(name):
    for problem in RULE_PROBLEMS.values():
        try:
            check_rule(name, [problem], exact=name not in LOG_ON_GAUSSIAN_PATH)
        except AssertionError as error:
            if "no problem could run the rule" in str(error):
                continue
            raise
        return
    pytest.fail(f"{name} runs on none of the reference problems")


@pytest.mark.slow
@pytest.mark.twin
@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_registered_rule_conforms_on_every_reference_problem(name):
    check_rule(name, exact=name not in LOG_ON_GAUSSIAN_PATH)


def test_a_rule_whose_batched_path_differs_from_its_scalar_path_is_rejected():
    from allocopt.algorithms import Uniform

    class Skewed(Uniform):
        """Batched steps that pull the last arm whatever the uniform: not the rule's ``select``."""

        def select_batch(self, context, view, state, uniforms):
            import numpy as np

            return np.full(view.counts.shape[0], context.n_arms - 1)

        def compiled_step(self, context):
            return None

    with pytest.raises(AssertionError, match="batched and scalar"):
        check_rule(Skewed(), [RULE_PROBLEMS["gaussian k = 1"]])


def test_check_rule_refuses_what_is_not_a_rule():
    with pytest.raises(AllocoptError):
        check_rule(object())

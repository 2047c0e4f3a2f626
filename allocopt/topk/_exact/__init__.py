r"""The exact top-k solver (``solve_topk(problem, method="exact")``).

The homogeneous problem :math:`T^* = \min\{\sum_a \psi_a : C_{ij}(\psi) \ge 1\}` is solved by an active set
of *binding forests*:

1. tied arms are merged into groups with multiplicities (:mod:`allocopt.topk._exact.groups`), which makes tied
   arms' allocations equal by construction;
2. the first forest is the previous solution's binding forest (``warm_start=``), for Gaussian arms the forest
   located through the optimal-transport dual (:mod:`allocopt.topk._exact.starts`: a staircase in sorted
   order, Proposition 3.2), for the other families the forest so located for a Gaussian surrogate with the
   family's variance at the means (:mod:`allocopt.topk._exact.starts`), or Theorem 3.4's double star
   (:math:`i_k` joined to every bottom group, :math:`j_1` to every top group);
3. on a forest the KKT system is solved to machine precision (:mod:`allocopt.topk._exact.forest`);
4. the solution is checked exactly: multipliers :math:`\nu \ge 0` on the forest, and every pair's cost at
   least 1 (:mod:`allocopt.topk._scan`, vectorised over blocks of pairs, pruned by a closed-form lower
   bound; above ``ENVELOPE_PAIRS`` group pairs first on the pairs that meet on the two lower envelopes,
   :mod:`allocopt.topk._exact.checks`, the same minimum in :math:`O(K \log K)`, and a forest that passes is
   confirmed by the scan over every pair up to ``CONFIRM_PAIRS`` pairs; above, the certificate's value is the
   envelope minimum less a rounding allowance, ``ENVELOPE_ROUNDING``). Both hold exactly at the optimum
   (Theorem 3.5), so the forest is final;
5. otherwise one pivot: the edge with the most negative multiplier leaves (splitting its tree), or the most
   violated pair enters (joining two trees, or closing a cycle whose leaving edge is chosen by the linearised
   ratio test on the multipliers), and step 3 repeats; from the Gaussian surrogate's staircase, multiple pivots
   come first while they make progress (:mod:`allocopt.topk._exact.starts`: the north-west corner walk with
   the true family's gradients at the forest solution, then turns of the corners of negative multiplier);
6. if the pivots cycle or run long, a log-barrier interior-point method (:mod:`allocopt.topk._exact.barrier`) over
   all pairs (or, for large instances, over candidate pairs grown by column generation: a few partners per
   group, the path continued on the grown set) locates the binding forest, which is then polished exactly as
   in step 3 and checked as in step 4.

The result is certified by the shared certifier with the forest multipliers; its status is ``"optimal"``
only when the certified relative gap is at most ``tol`` (default :math:`10^{-9}`).
"""

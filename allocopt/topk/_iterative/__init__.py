r"""The iterative solvers of Wang, Yang, You (2022): FWGA (Algorithm 1, :mod:`.fwga`) and KKT-Tracking (Algorithm 3,
:mod:`.kkt_tracking`), with the certified gap of every iterate (:mod:`.history`)."""

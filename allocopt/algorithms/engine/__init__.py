"""The engine core: the run loop (Python and compiled), the rule protocol, reward streams, statistics,
stopping and confidence bounds. It depends on the top-k layer and the families, never on the rules."""

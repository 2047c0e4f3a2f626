"""The sampling rules, one module per family of rules, each with its readable ``select`` (the specification)
and, where it has one, its compiled step kernel. They depend on the engine core."""

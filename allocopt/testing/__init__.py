"""Reference instances (each with its source) and conformance checks that other packages can run."""

from .instances import REFERENCE_INSTANCES, ReferenceInstance, get_instance
from .rules import RULE_PROBLEMS, check_rule

__all__ = ["REFERENCE_INSTANCES", "ReferenceInstance", "get_instance", "RULE_PROBLEMS", "check_rule"]

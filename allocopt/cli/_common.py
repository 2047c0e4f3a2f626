"""Helpers shared by the subcommands: parsing number lists and printing JSON."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

import numpy as np

__all__ = ["float_list", "float_rows", "to_jsonable", "print_json"]


def float_list(text: str) -> list[float]:
    """Parse ``"0.5,0.2,-1"`` into floats (an argparse ``type``)."""
    try:
        values = [float(item) for item in text.replace(" ", "").split(",") if item != ""]
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from error
    if not values:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}")
    return values


def float_rows(text: str) -> list[list[float]]:
    """Parse ``"1,2;3,4"`` (rows separated by ';') into a list of rows (an argparse ``type``)."""
    rows = [row for row in text.split(";") if row.strip() != ""]
    if not rows:
        raise argparse.ArgumentTypeError(f"expected rows of comma-separated numbers separated by ';', got {text!r}")
    return [float_list(row) for row in rows]


def to_jsonable(value: Any) -> Any:
    """Convert numpy arrays and scalars (recursively) to JSON-compatible Python objects.

    Infinite floats become the strings ``"inf"`` / ``"-inf"`` and NaN becomes ``None`` so that the output is
    strict JSON.
    """
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if math.isnan(number):
            return None
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        return number
    return value


def print_json(payload: dict[str, Any]) -> None:
    """Print one strict JSON object on stdout."""
    print(json.dumps(to_jsonable(payload), allow_nan=False))

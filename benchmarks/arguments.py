"""Command-line value types the benchmarks share.

A count of runs, rounds, pairs or pods below one is refused by argparse, as a one-line usage error that
names the option (``floor.py: error: argument --repeat: must be a whole number of at least 1, not '0'``,
exit status 2), instead of a traceback from the median of no rounds or a division by zero, or a scale run
of no pods reported as a failed scenario.
"""

from __future__ import annotations

import argparse


def at_least_one(text: str) -> int:
    """An ``argparse`` ``type``: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
    return value

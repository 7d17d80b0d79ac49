"""Executors: run circuits with given shots on one target and return counts."""

from qbo.execution.base import ClassicalSourced, Closing, Compiling, Counts, Executor, ones
from qbo.execution.exact import ExactExecutor
from qbo.execution.targets import TARGET_FORMS, Target, make_executor, parse_target

__all__ = [
    "ClassicalSourced", "Closing", "Compiling", "Counts", "ExactExecutor", "Executor", "TARGET_FORMS", "Target",
    "make_executor", "parse_target", "ones",
]

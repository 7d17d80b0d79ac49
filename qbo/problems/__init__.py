"""Finite-arm benchmark problems: arms in [0, 1]^d, each with a quantum reward oracle."""

from qbo.problems.automl import automl_svm, compute_svm_table, svm_table
from qbo.problems.base import Problem
from qbo.problems.linear import linear, linear_function
from qbo.problems.registry import PROBLEMS, make_problem
from qbo.problems.synthetic import synthetic, synthetic_function

__all__ = [
    "PROBLEMS", "Problem", "automl_svm", "compute_svm_table", "linear", "linear_function",
    "make_problem", "svm_table", "synthetic", "synthetic_function",
]

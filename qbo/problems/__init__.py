"""Benchmark problems: finite arm sets in [0, 1]^d with a quantum reward oracle per arm
(``Problem``), and the drifting problem of the time-varying seed (``TVProblem``)."""

from qbo.problems.automl import automl_svm, compute_svm_table, svm_table
from qbo.problems.base import Problem
from qbo.problems.drifting import TVProblem, make_tv_problem
from qbo.problems.lengthscale_benchmarks import berkenkamp, michalewicz
from qbo.problems.linear import linear, linear_function
from qbo.problems.registry import ALL_PROBLEMS, DRIFTING, PROBLEMS, is_drifting, make_problem, takes_seed
from qbo.problems.synthetic import synthetic, synthetic_function

__all__ = [
    "ALL_PROBLEMS", "DRIFTING", "PROBLEMS", "Problem", "TVProblem", "automl_svm", "berkenkamp", "is_drifting", "make_tv_problem", "michalewicz", "takes_seed", "compute_svm_table", "linear", "linear_function",
    "make_problem", "svm_table", "synthetic", "synthetic_function",
]

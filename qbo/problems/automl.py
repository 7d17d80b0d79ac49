"""The Q-BO paper's AutoML problem (Dai et al. 2023, Sec. 6 and App. J), made offline.

The paper tunes an RBF SVM's penalty C and kernel width gamma, each over 5 points in
[1e-4, 1] (|X| = 25), on the Pima Indians diabetes data (8 features, binary, 70/30
train/validation split), with Gaussian noise of unstated variance.

Substitutions (the paper's dataset cannot be fetched offline):
- Dataset: scikit-learn's bundled Wisconsin breast-cancer data (``load_breast_cancer``,
  569 samples, 30 features). It is the closest offline analogue of Pima: a binary medical
  diagnosis task with a similar class imbalance (37 % / 63 % vs Pima's 35 % / 65 %) and a
  few hundred samples. (``load_diabetes`` is a *regression* set, not Pima.)
- Split: 70/30, stratified, ``random_state=seed`` (default 0); features standardised with a
  ``StandardScaler`` fitted on the training part only. The reward is the validation accuracy.
- Grid: ``np.logspace(-4, 0, 5)`` = 1e-4, 1e-3, 1e-2, 1e-1, 1 for both C and gamma. The paper
  says "5 points with equal spacing" on [1e-4, 1]; linear spacing would put four of the five
  points in [0.25, 1] and is not how these hyperparameters are ever searched, so we read it
  as equal spacing in log10.
- Arms: ``(log10 C + 4) / 4, (log10 gamma + 4) / 4`` in [0, 1]^2, C-major: arm
  ``i = 5 * iC + iG``.
- Noise: y ~ N(accuracy, std^2), discretised on 2^qubits bins over the shared window
  ``default_window(std)``. The paper gives no std; we default to ``std = 0.1``, about 0.3
  of the accuracies' range (as the synthetic problem's 0.4 / 1), of the order of a
  171-sample validation accuracy's binomial error, and with 6 qubits fine enough that the
  discretised mean is within 1e-3 of the accuracy.

The accuracy table for seed 0 is computed once by :func:`compute_svm_table` and shipped as
``qbo/problems/data/automl_svm.json``; :func:`automl_svm` reads it (no SVM fit at run time).
Other seeds are computed on first use and memoised.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from qbo import caches
from qbo.oracles import default_window, gaussian
from qbo.problems.base import Problem
from qbo.problems.rewards import check_int, check_positive

GRID = tuple(float(v) for v in np.logspace(-4, 0, 5))
DATASET = "load_breast_cancer"
TEST_SIZE = 0.3
TABLE_FILE = "automl_svm.json"
SHIPPED_SEED = 0


def compute_svm_table(seed: int = SHIPPED_SEED) -> dict[str, Any]:
    """Fit the 25 SVMs and return the table record (what ``automl_svm.json`` holds).

    ``accuracy[iC][iG]`` = ``correct[iC][iG] / n_validation`` for C = GRID[iC], gamma = GRID[iG].
    """
    import sklearn
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    seed = check_int("seed", seed, 0)
    x, y = load_breast_cancer(return_X_y=True)
    x_tr, x_va, y_tr, y_va = train_test_split(x, y, test_size=TEST_SIZE, stratify=y, random_state=seed)
    scaler = StandardScaler().fit(x_tr)
    x_tr, x_va = scaler.transform(x_tr), scaler.transform(x_va)
    correct = [
        [int(np.sum(SVC(kernel="rbf", C=c, gamma=g).fit(x_tr, y_tr).predict(x_va) == y_va)) for g in GRID]
        for c in GRID
    ]
    n_va = int(len(y_va))
    return {
        "dataset": f"sklearn.datasets.{DATASET}",
        "n_samples": int(len(y)),
        "n_features": int(x.shape[1]),
        "split": {"test_size": TEST_SIZE, "stratify": True, "random_state": seed, "n_train": int(len(y_tr)), "n_validation": n_va},
        "preprocessing": "StandardScaler fitted on the training part",
        "model": "sklearn.svm.SVC(kernel='rbf', C=C, gamma=gamma), other arguments default",
        "sklearn_version": sklearn.__version__,
        "C": list(GRID),
        "gamma": list(GRID),
        "correct": correct,
        "accuracy": [[k / n_va for k in row] for row in correct],
    }


def write_svm_table(path: str | Path | None = None) -> Path:
    """Recompute the seed-0 table and write it (default: the shipped JSON file)."""
    path = Path(path) if path is not None else Path(__file__).parent / "data" / TABLE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(compute_svm_table(SHIPPED_SEED), indent=1) + "\n")
    return path


@caches.lru(maxsize=None)
def _table_json(seed: int) -> str:
    if seed == SHIPPED_SEED:
        return resources.files("qbo.problems").joinpath("data", TABLE_FILE).read_text()
    return json.dumps(compute_svm_table(seed))


def svm_table(seed: int = SHIPPED_SEED) -> dict[str, Any]:
    """The table record for ``seed`` (shipped for seed 0, computed and memoised otherwise)."""
    return json.loads(_table_json(check_int("seed", seed, 0)))


def automl_svm(std: float = 0.1, seed: int = SHIPPED_SEED, qubits: int = 6) -> Problem:
    """The 25-arm SVM tuning problem; ``seed`` picks the train/validation split (see module doc)."""
    std = check_positive("std", std)
    qubits = check_int("qubits", qubits, 1)
    table = svm_table(seed)
    acc = np.asarray(table["accuracy"], dtype=float)
    logc, logg = np.log10(table["C"]), np.log10(table["gamma"])
    arms = np.array([[(lc + 4.0) / 4.0, (lg + 4.0) / 4.0] for lc in logc for lg in logg])
    window = default_window(std)
    oracles = [gaussian(a, std, qubits, window=window) for a in acc.ravel()]
    params = {"seed": seed, "std": std, "qubits": qubits}
    return Problem.from_oracles("automl-svm", np.round(arms, 12), oracles, params)

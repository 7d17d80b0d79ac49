"""Every limit qbo enforces on its inputs, in one place (documented in docs/limits.md).

Bottom layer: imports nothing from qbo but ``qbo.errors``. Each check raises ``BadInput``
(or ``TooMuchWork``) with one line that names the value, the limit and its name here, so a
user can look the limit up.
"""

from __future__ import annotations

import math
import os
from typing import Any

from qbo.errors import BadInput, TooMuchWork

# QMC accuracy (amplitude or reward units) and failure probability.
EPS_MIN, EPS_MAX = 1e-6, 0.5  # eps in [EPS_MIN, EPS_MAX]; 1e-6 costs ~1e7 oracle calls (docs/limits.md)
ALPHA_MIN, ALPHA_MAX = 1e-12, 0.5  # alpha in (ALPHA_MIN, ALPHA_MAX]
SHOTS_MAX = 10**7  # IAE shots per round
# Experiments.
BUDGET_MAX = 10**12  # oracle calls per unit
TRIALS_MAX = 10**5
SEED_MAX = 2**63 - 1
WORKERS_MAX = 64  # --workers: local Dask worker processes, each importing qbo (docs/limits.md)
STAGES_WITHOUT_YES = 10**7  # predicted stage records (trials x algorithms x budget) before --yes is needed
# Figures (qbo plot).
DPI_MIN, DPI_MAX = 10, 1200  # --dpi; a 6.4 x 4.2 inch figure at 1200 dpi is 7680 x 5040 pixels
# Circuits.
POWER_MAX = 4096  # Grover power k of `circuits export` (the circuit holds k copies of Q)
K_MAX_MAX = 1024  # largest Grover power of `calibrations depth --kmax` and of a k_max option
EXPORT_MAX_OPS = 50_000  # predicted gates of an exported Q^k A (each is decomposed and written)
DEPTH_MAX_OPS = 25_000  # predicted gates transpiled by `calibrations depth` over k = 0..kmax
QASM_MAX_BYTES = 1_000_000  # an OpenQASM 3 oracle file
QASM_MAX_QUBITS = 30  # any target; the exact and aer targets allow fewer, as memory allows (below)
# Configs and names.
CONFIG_MAX_BYTES = 1_000_000
CONFIG_MAX_DEPTH = 4  # nesting of tables/arrays in an experiment TOML (algorithm_options.NAME.key = depth 2)
NAME_MAX_CHARS = 200  # backend, problem and algorithm names
PATH_MAX_CHARS = 1024  # a calibration given by name or path
TIMEOUT_MAX_S = 7 * 24 * 3600.0
MEMORY_SHARE = 0.5  # a simulation may plan to use at most this share of the memory available


def check_epsilon(value: Any, name: str = "epsilon") -> float:
    x = _real(value, name)
    if not EPS_MIN <= x <= EPS_MAX:
        raise BadInput(f"{name} must be in [{EPS_MIN:g}, {EPS_MAX:g}] (limit EPS_MIN/EPS_MAX), got {value!r}")
    return x


def check_alpha(value: Any, name: str = "alpha") -> float:
    x = _real(value, name)
    if not ALPHA_MIN < x <= ALPHA_MAX:
        raise BadInput(f"{name} must be in ({ALPHA_MIN:g}, {ALPHA_MAX:g}] (limit ALPHA_MIN/ALPHA_MAX), got {value!r}")
    return x


def check_fraction(value: Any, name: str = "fraction") -> float:
    x = _real(value, name)
    if not 0.0 < x <= 1.0:
        raise BadInput(f"{name} must be in (0, 1], got {value!r}")
    return x


def check_timeout(value: Any, name: str = "timeout") -> float:
    x = _real(value, name)
    if not 0.0 < x <= TIMEOUT_MAX_S:
        raise BadInput(f"{name} must be > 0 and <= {TIMEOUT_MAX_S:g} seconds (limit TIMEOUT_MAX_S), got {value!r}")
    return x


def check_int(value: Any, name: str, low: int, high: int, limit: str = "") -> int:
    """An integer in [low, high]; ``limit`` names the constant that sets ``high``."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise BadInput(f"{name} must be an integer in [{low}, {high}], got {value!r}")
    if not low <= value <= high:
        tag = f" (limit {limit})" if limit else ""
        raise BadInput(f"{name} must be an integer in [{low}, {high:g}]{tag}, got {value!r}")
    return value


def check_name(value: Any, name: str, path_ok: bool = False) -> str:
    """A plain name of at most NAME_MAX_CHARS; with ``path_ok``, a name or a path of at most PATH_MAX_CHARS."""
    if not isinstance(value, str):
        raise BadInput(f"{name} must be a string, got {type(value).__name__}")
    cap, limit = (PATH_MAX_CHARS, "PATH_MAX_CHARS") if path_ok else (NAME_MAX_CHARS, "NAME_MAX_CHARS")
    if len(value) > cap:
        raise BadInput(f"{name} is {len(value)} characters long, more than {cap} (limit {limit})")
    if path_ok:
        if not value.strip() or "\0" in value:
            raise BadInput(f"{name} must be a non-empty name or path, got {value[:60]!r}")
        return value
    if not value or any(c in value for c in "/\\\0") or value in (".", ".."):
        raise BadInput(f"{name} must be a plain non-empty name without '/', got {value[:60]!r}")
    return value


def check_power(value: Any, name: str = "power") -> int:
    return check_int(value, name, 0, POWER_MAX, "POWER_MAX")


def check_k_max(value: Any, name: str = "kmax") -> int:
    return check_int(value, name, 0, K_MAX_MAX, "K_MAX_MAX")


def state_prep_ops(circuit: Any) -> int:
    """Predicted basic gates of a state preparation A: 1 per gate on <= 2 qubits, 4 * 2^m for a
    gate on m > 2 qubits (a dense state preparation decomposes into about that many)."""
    return max(1, sum(1 if len(i.qubits) <= 2 else 4 * 2 ** len(i.qubits) for i in circuit.data))


def check_export_work(circuit: Any, power: int) -> int:
    """Refuse an export of Q^k A whose predicted size (2k+1) * ops(A) exceeds EXPORT_MAX_OPS."""
    predicted = (2 * power + 1) * state_prep_ops(circuit)
    if predicted > EXPORT_MAX_OPS:
        raise TooMuchWork(f"Q^{power} A would have about {predicted:.3g} gates, more than {EXPORT_MAX_OPS} "
                          f"(limit EXPORT_MAX_OPS); choose a smaller --power")
    return predicted


def check_depth_work(circuit: Any, k_max: int) -> int:
    """Refuse a depth table whose predicted work (k_max+1)^2 * ops(A) exceeds DEPTH_MAX_OPS."""
    predicted = (k_max + 1) ** 2 * state_prep_ops(circuit)
    if predicted > DEPTH_MAX_OPS:
        raise TooMuchWork(f"a depth table up to k={k_max} would transpile about {predicted:.3g} gates, more than "
                          f"{DEPTH_MAX_OPS} (limit DEPTH_MAX_OPS); choose a smaller --kmax")
    return predicted


def available_memory() -> int:
    """Bytes of memory available now (MemAvailable on Linux, else physical memory)."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def exact_bytes(num_qubits: int, grover: bool) -> int:
    """Memory the exact target plans for a circuit: a dense Q operator (16 * 4^n bytes, three
    copies while it is built) for Grover powers, else a statevector (16 * 2^n, three copies)."""
    return 3 * 16 * (4**num_qubits if grover else 2**num_qubits)


def max_qubits(target_kind: str, grover: bool = True) -> int:
    """The qubit cap of a target: exact and aer allow what ``MEMORY_SHARE`` of the memory
    available now holds (see ``exact_bytes``; aer keeps one statevector); others QASM_MAX_QUBITS."""
    budget = MEMORY_SHARE * available_memory()
    if target_kind == "exact":
        n = 0
        while n < QASM_MAX_QUBITS and exact_bytes(n + 1, grover) <= budget:
            n += 1
        return n
    if target_kind == "aer":
        return min(QASM_MAX_QUBITS, int(math.log2(max(budget / (3 * 16), 2))))
    return QASM_MAX_QUBITS


def check_qubits(num_qubits: int, target_kind: str, grover: bool = True) -> None:
    """Refuse a circuit wider than ``max_qubits(target_kind)`` before any memory is allocated."""
    cap = max_qubits(target_kind, grover)
    if num_qubits > cap:
        need = exact_bytes(num_qubits, grover) if target_kind == "exact" else 3 * 16 * 2**num_qubits
        raise TooMuchWork(
            f"a {num_qubits}-qubit circuit is too wide for the {target_kind} target: it allows {cap} qubits, "
            f"what {MEMORY_SHARE:.0%} of the {available_memory() / 2**30:.1f} GiB available holds "
            f"(needs ~{need / 2**30:.3g} GiB; limit max_qubits, see docs/limits.md)"
        )


def check_stages(trials: int, algorithms: int, budget: int, yes: bool) -> int:
    """Predicted stage records (each stage costs >= 1 call): refuse above STAGES_WITHOUT_YES without --yes."""
    predicted = trials * algorithms * budget
    if predicted > STAGES_WITHOUT_YES and not yes:
        raise TooMuchWork(
            f"this run may write up to {predicted:.3g} stage records (trials x algorithms x budget), more than "
            f"{STAGES_WITHOUT_YES:.0e} (limit STAGES_WITHOUT_YES); pass --yes to run it anyway"
        )
    return predicted


def _real(value: Any, name: str) -> float:
    if isinstance(value, bool):
        raise BadInput(f"{name} must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise BadInput(f"{name} must be a number, got {str(value)[:60]!r}") from None
    if not math.isfinite(x):
        raise BadInput(f"{name} must be a finite number, got {value!r}")
    return x

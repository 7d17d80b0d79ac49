"""A finished run's results as read back: its configuration and verified stage records.

Readers of a run folder (``qbo export``, ``qbo.load_run``) start here: the folder must be a
qbo run (run.json), unchanged since it was written (config.toml's hash) and finished, and
its stages.jsonl must match the sha256 that run.json recorded when it finished, and each
compact unit's call file the digests its records hold (``qbo.experiments.compact``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qbo.errors import BadInput
from qbo.experiments.compact import verify_calls
from qbo.experiments.config import ExperimentConfig, load_config
from qbo.experiments.folder import MARKER, finished, verify_finished, verify_run_folder
from qbo.experiments.journal import parse_lines


def finished_records(run_dir: str | Path) -> tuple[ExperimentConfig, list[dict[str, Any]]]:
    """(config, stage records) of a finished run, verified; one-line ``BadInput`` for a folder
    that is not a run or not finished, ``BadFile`` for one whose records were changed."""
    folder = Path(run_dir)
    if not (folder / MARKER).is_file():
        raise BadInput(f"'{folder}' is not a qbo run folder: no {MARKER}")
    config = load_config(folder / "config.toml")
    verify_run_folder(folder, config)
    if finished(folder) is None:
        raise BadInput(f"'{folder}' is not finished: its records are still in units/; finish it with "
                       f"qbo run --resume {folder}")
    data = verify_finished(folder, config)
    records = parse_lines(data.split(b"\n")[:-1])
    verify_calls(folder, records)
    return config, records

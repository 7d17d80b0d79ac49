"""Run folders: claimed atomically with their config, locked while a process works in them.

A folder is a qbo run folder when it holds ``run.json`` = ``{"format": 1, "config_sha256":
...}``, plus ``"finished": {"stages_sha256", "stages_bytes", "records"}`` once the run ended
(``mark_finished``). The user-facing rules are in docs/limits.md, "Run folders".

- **Claim** (``claim_run_folder``): built as a hidden folder beside the target and renamed
  into place, so a kill leaves no folder or a resumable one. A folder ``qbo submit`` already
  made gets config.toml, then run.json, each replaced atomically.
- **Verify**: config.toml must still hash to ``config_sha256`` and describe the experiment
  being run; the same hash heads every unit journal (``qbo.experiments.journal``).
- **Lock**: ``fcntl.flock`` on ``.lock`` until ``release``; it dies with its process.
- **Finish** (issue 13: each record stored once): ``runner.merge`` writes stages.jsonl,
  summary.csv and regret.png, marks run.json, and only then removes ``units/``; run.json
  thus says which of the two holds the records (``verify_finished``).
- **Pinned device model** (``pin_calibration``): ``qbo submit`` to ``ibm:BACKEND`` saves the
  calibration at submission in ``calibration.json`` and the claim records its sha256, so a
  recalibration mid-run changes neither pads nor decisions; an edited, deleted, foreign or
  late pin is refused.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from qbo.errors import BadFile, BadInput, RunFolderConflict
from qbo.experiments.config import ExperimentConfig, load_config
from qbo.experiments.journal import STARTED, UnitJournal, verify_stages
from qbo.files import fsync_folder, json_object, read_lines, write_text_atomic
from qbo.noise import Snapshot

FORMAT = 1
MARKER = "run.json"
LOCK = ".lock"
STAGES = "stages.jsonl"
UNITS = "units"
CALIBRATION = "calibration.json"
PIN_KEY = "calibration_sha256"  # run.json's record of the pinned device model
_PIN_STAGING = f".{CALIBRATION}.tmp"
PRE_CLAIM = {LOCK, "execution.json", "jobs.jsonl", CALIBRATION, _PIN_STAGING}  # what a folder may hold before its claim (qbo submit)


def config_hash(config: ExperimentConfig) -> str:
    """sha256 of the resolved config as config.toml holds it."""
    return hashlib.sha256(config.to_toml().encode()).hexdigest()


def unit_key(trial: int, algorithm: str) -> str:
    """The name of a (trial, algorithm) unit: its journal is ``units/KEY.jsonl``."""
    return f"trial{trial:03d}-{algorithm}"


def unit_keys(config: ExperimentConfig) -> list[str]:
    """Every unit of the run, in the order stages.jsonl holds them."""
    return [unit_key(trial, algorithm) for trial in range(config.trials) for algorithm in config.algorithms]


def finished(folder: str | os.PathLike) -> dict[str, Any] | None:
    """run.json's record of the finished run's stages.jsonl, or None while the run is under way."""
    return _read_marker(Path(folder)).get("finished")


def mark_finished(folder: str | os.PathLike, config: ExperimentConfig, stages: bytes, records: int) -> None:
    """Record in run.json (atomically) that the run finished with stages.jsonl = ``stages``;
    call after stages.jsonl, summary.csv and regret.png are durable."""
    record = {"stages_sha256": hashlib.sha256(stages).hexdigest(), "stages_bytes": len(stages), "records": records}
    _write_marker(Path(folder), config, record)


def verify_finished(folder: str | os.PathLike, config: ExperimentConfig) -> bytes:
    """The bytes of a finished run's stages.jsonl, checked against run.json's record (one
    sha256); a changed file is refused naming the first line that breaks its hash chain."""
    folder = Path(folder)
    record = finished(folder)
    path = folder / STAGES
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadFile(f"'{path}' is missing: the run finished and its journals were removed, so its records are "
                      "lost; start afresh") from None
    except OSError as exc:
        raise BadFile(f"cannot read '{path}': {exc.strerror}") from None
    if len(data) != record["stages_bytes"] or hashlib.sha256(data).hexdigest() != record["stages_sha256"]:
        verify_stages(path, unit_keys(config), config_hash(config))
    lines = data.count(b"\n")
    if lines != record["records"]:  # the file matches its hash, so run.json's count was edited
        raise BadFile(f"'{folder / MARKER}' counts {record['records']} records but '{path}', which matches its hash, "
                      f"holds {lines}; the run folder is damaged")
    return data


def remove_units(folder: str | os.PathLike) -> None:
    """Remove a finished run's journals (stages.jsonl holds their records)."""
    units = Path(folder) / UNITS
    if units.is_dir() and not units.is_symlink():
        shutil.rmtree(units)
        fsync_folder(units.parent)


class RunFolderLock:
    """An exclusive lock on one run folder, held through an open descriptor."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder = folder
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> "RunFolderLock":
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:
        self.release()


def lock_run_folder(folder: str | os.PathLike) -> RunFolderLock:
    """Lock ``folder`` (which must exist) or refuse, naming the process that holds it."""
    folder = Path(folder)
    path = folder / LOCK
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise BadFile(f"cannot open the lock file '{path}': {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise RunFolderConflict(f"run folder '{folder}' is in use by {holder}; wait for it to finish or stop it first") from None
    except OSError as exc:
        os.close(fd)
        raise BadFile(f"cannot lock '{path}': {exc.strerror}") from None
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": stamp}).encode(), 0)
    return RunFolderLock(folder, fd)


def claim_run_folder(folder: str | os.PathLike, config: ExperimentConfig) -> RunFolderLock:
    """Claim ``folder`` for ``config`` (fresh) or verify it holds ``config`` (resume); lock it.

    Call only after the config has been validated: a bad config never creates a folder.
    """
    folder = Path(folder)
    if not folder.exists() and not folder.is_symlink():
        claimed = _claim_fresh(folder, config)
        if claimed is not None:
            return claimed
    check_claimable(folder, config)  # read-only first: a refusal leaves the folder untouched
    lock = lock_run_folder(folder)
    try:
        if (folder / MARKER).exists():
            verify_run_folder(folder, config)
            check_units(folder, config)
        else:
            write_text_atomic(folder / "config.toml", config.to_toml())
            _write_marker(folder, config)
    except BaseException:
        lock.release()
        raise
    return lock


def check_claimable(folder: str | os.PathLike, config: ExperimentConfig) -> None:
    """Refuse, without writing anything, a folder that ``claim_run_folder`` would refuse:
    a file, a path below a file, a non-empty folder that is not a run folder, or a run folder
    of another experiment (or with an edited config.toml)."""
    folder = Path(folder)
    if not folder.exists() and not folder.is_symlink():
        ancestor = folder.parent
        while not ancestor.exists() and ancestor != ancestor.parent:
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise BadInput(f"--out '{folder}' runs through a file, not a folder")
        return
    if not folder.is_dir():
        raise BadInput(f"--out '{folder}' exists and is not a folder")
    if (folder / MARKER).exists():
        verify_run_folder(folder, config)
    elif any(p.name not in PRE_CLAIM for p in folder.iterdir()):
        if (folder / "config.toml").exists() or (folder / "units").exists():
            raise BadFile(f"'{folder}' holds config.toml or units/ but no {MARKER}: it is not a run folder of this qbo "
                          "version (or its start was interrupted); start afresh with a new --out")
        raise RunFolderConflict(f"--out '{folder}' exists, is not empty and is not a qbo run folder; "
                                "choose a new or empty folder")


def open_run_folder(folder: str | os.PathLike) -> ExperimentConfig:
    """The config of an existing run folder, verified against its run.json (for resume)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise BadInput(f"'{folder}' is not a folder")
    if not (folder / MARKER).exists():
        if (folder / "config.toml").exists():
            raise BadFile(f"'{folder}' has no {MARKER}: its start was interrupted before it was claimed, or it was made "
                          "by an older qbo; start afresh")
        raise BadInput(f"'{folder}' is not a qbo run folder: no config.toml")
    config = load_config(folder / "config.toml")
    verify_run_folder(folder, config)
    if finished(folder) is not None:  # its records are in stages.jsonl; journals left over are removed on resume
        verify_finished(folder, config)
        return config
    if (folder / "units").exists() and not (folder / "units").is_dir():
        raise BadFile(f"'{folder / 'units'}' is not a folder; the run folder is damaged")
    for path in sorted((folder / "units").glob("*.jsonl")):  # read-only, so a refusal changes nothing
        UnitJournal(path, config_hash(config)).check()
    check_units(folder, config)
    return config


def check_units(folder: str | os.PathLike, config: ExperimentConfig) -> None:
    """Refuse an unfinished run whose started unit (``units/.started``) lost its journal:
    recomputing it would hide the damage (its records are gone, not torn)."""
    units = Path(folder) / UNITS
    listed = units / STARTED
    if finished(folder) is not None or not listed.is_file():
        return
    keys = set(unit_keys(config))
    for n, entry in enumerate(read_lines(listed), 1):
        key = entry.get("unit")
        if not isinstance(key, str) or key not in keys:
            raise BadFile(f"'{listed}' line {n} names no unit of this run ({_shown(key)}); the run folder is damaged")
        journal = units / f"{key}.jsonl"
        if not journal.is_file():
            raise BadFile(f"'{journal}' is missing, but unit {key} was started ('{listed}' line {n}): its "
                          "records are lost; restore the journal or start afresh")
        if journal.stat().st_size == 0:  # listed only after its first lines were fsynced (journal.UnitJournal._write)
            raise BadFile(f"'{journal}' is empty, but unit {key} was started ('{listed}' line {n}): its "
                          "records are lost; restore the journal or start afresh")


def _shown(value: Any) -> str:
    return json.dumps(value)[:40]


def verify_run_folder(folder: Path, config: ExperimentConfig) -> None:
    """Refuse a folder whose config.toml was edited, or which holds a different experiment."""
    marker = _read_marker(folder)
    path = folder / "config.toml"
    try:
        written = path.read_bytes()
    except OSError as exc:
        raise BadFile(f"cannot read '{path}': {exc.strerror}") from None
    if hashlib.sha256(written).hexdigest() != marker["config_sha256"]:
        raise BadFile(f"'{path}' was changed after the run started (its sha256 differs from {MARKER}); "
                      "the journals no longer match it; restore it or start afresh")
    if config_hash(config) != marker["config_sha256"]:
        raise RunFolderConflict(f"'{folder}' holds a different experiment; use a fresh --out or --resume {folder}")


def _claim_fresh(folder: Path, config: ExperimentConfig) -> RunFolderLock | None:
    """Build the folder beside its final place and rename it in; None if someone else won."""
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise BadInput(f"--out '{folder}' runs through a file, not a folder") from None
    except NotADirectoryError:
        raise BadInput(f"--out '{folder}' runs through a file, not a folder") from None
    _sweep_stale_claims(parent, folder.name)
    staging = Path(tempfile.mkdtemp(dir=parent, prefix=f".{folder.name}.claim-"))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o777 & ~umask)  # mkdtemp makes 0700; a run folder is an ordinary folder
        lock = lock_run_folder(staging)  # first, so a concurrent sweep never removes it
        write_text_atomic(staging / "config.toml", config.to_toml())
        _write_marker(staging, config)
        try:
            os.rename(staging, folder)  # atomic; fails if a folder with files appeared meanwhile
        except OSError:
            lock.release()
            shutil.rmtree(staging, ignore_errors=True)
            return None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    fsync_folder(parent)
    lock.folder = folder
    return lock


def _sweep_stale_claims(parent: Path, name: str) -> None:
    """Remove staging folders of claims killed before their rename (nobody holds their lock)."""
    for stale in parent.glob(f".{name}.claim-*"):
        try:
            lock = lock_run_folder(stale)
        except (RunFolderConflict, BadFile):
            continue
        shutil.rmtree(stale, ignore_errors=True)
        lock.release()


def _write_marker(folder: Path, config: ExperimentConfig, done: dict[str, Any] | None = None) -> None:
    """run.json; at the claim it records the sha256 of a pinned calibration.json, later
    rewrites keep it (``pinned_calibration`` then insists on that file)."""
    marker = {"format": FORMAT, "config_sha256": config_hash(config)}
    if (folder / MARKER).exists():
        pinned = _read_marker(folder).get(PIN_KEY)
    else:  # the claim: record the pin qbo submit left, if any
        pin = _read_pin(folder)
        pinned = None if pin is None else pin[0]
    if pinned is not None:
        marker[PIN_KEY] = pinned
    write_text_atomic(folder / MARKER, json.dumps(marker | ({"finished": done} if done else {})) + "\n")


def _read_marker(folder: Path) -> dict[str, Any]:
    path = folder / MARKER
    try:
        marker = json.loads(path.read_bytes())
    except OSError as exc:
        raise BadFile(f"cannot read '{path}': {exc.strerror}") from None
    except ValueError:
        raise BadFile(f"'{path}' is not valid JSON; the run folder is damaged") from None
    if (not isinstance(marker, dict) or marker.get("format") != FORMAT
            or not isinstance(marker.get("config_sha256"), str) or len(marker["config_sha256"]) != 64
            or (PIN_KEY in marker and not (isinstance(marker[PIN_KEY], str) and len(marker[PIN_KEY]) == 64))
            or not _finished_record(marker.get("finished", {}))):
        raise BadFile(f"'{path}' is not a run.json of format {FORMAT}; the run folder is damaged")
    return marker


def _finished_record(record: Any) -> bool:
    """An absent record ({}) or a well-formed one."""
    if record == {}:
        return True
    return (isinstance(record, dict) and set(record) == {"stages_sha256", "stages_bytes", "records"}
            and isinstance(record["stages_sha256"], str) and len(record["stages_sha256"]) == 64
            and all(type(record[k]) is int and record[k] >= 0 for k in ("stages_bytes", "records")))


def _holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"pid {int(info['pid'])} on host {str(info['host'])[:80]} (since {str(info['since'])[:40]})"
    except (ValueError, KeyError, TypeError, OSError):
        return "another process"


def pin_calibration(folder: str | os.PathLike, snapshot: Snapshot, target: str) -> Snapshot | None:
    """Pin ``snapshot`` as the device model of the run about to be claimed in ``folder``
    (``calibration.json``, under the folder lock and never replacing a pin already there,
    which is kept and returned); a folder already claimed keeps what its run.json records
    (None: it has no device model)."""
    folder = Path(folder)
    with lock_run_folder(folder):
        if not (folder / MARKER).exists() and not (folder / CALIBRATION).exists():
            data = snapshot.to_json()
            Snapshot.from_json(data)  # never pin an invalid snapshot
            body = json.dumps({"sha256": _snapshot_digest(data), "snapshot": data}, indent=1) + "\n"
            staged = write_text_atomic(folder / _PIN_STAGING, body)
            os.replace(staged, folder / CALIBRATION)  # no pin to replace: checked under the lock
            fsync_folder(folder)
        return pinned_calibration(folder, target)


def pinned_calibration(folder: str | os.PathLike | None, target: str | None = None) -> Snapshot | None:
    """The device model pinned in ``folder`` (None if there is none). Once the run is claimed,
    run.json says whether it has one: a pinned file that went missing, was changed or was
    added later is refused, as is one pinned for another target than ``target``."""
    if folder is None:
        return None
    folder = Path(folder)
    path = folder / CALIBRATION
    claimed = (folder / MARKER).exists()
    recorded = _read_marker(folder).get(PIN_KEY) if claimed else None
    if claimed and recorded is None:
        if path.exists():
            raise BadFile(f"'{path}' was added after the run started without one; remove it (the run has no "
                          "device model) or start afresh")
        return None
    pinned = _read_pin(folder)
    if pinned is None:
        if recorded is not None:
            raise BadFile(f"'{path}' is missing: the run started with it as its device model ({MARKER}); restore it "
                          "or start afresh")
        return None
    digest, data = pinned
    if recorded is not None and digest != recorded:
        raise BadFile(f"'{path}' is not the calibration the run started with ({MARKER}); restore it or start afresh")
    try:
        snapshot = Snapshot.from_json(data, label=CALIBRATION)
    except ValueError as exc:
        raise BadFile(f"'{path}': {exc}") from None
    if target is not None and snapshot.source != target:
        raise BadInput(f"'{path}' pins the calibration of {snapshot.source}, but the run targets {target}; "
                       "use a fresh --out")
    return snapshot


def _read_pin(folder: Path) -> tuple[str, dict[str, Any]] | None:
    """(sha256, snapshot JSON) of a valid calibration.json in ``folder`` (None: no file); a
    file whose snapshot does not match its sha256, or that does not parse, is refused."""
    path = folder / CALIBRATION
    if not path.exists():
        return None
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise BadFile(f"cannot read '{path}': {exc.strerror}") from None
    body = json_object(raw, f"'{path}'")
    data = body.get("snapshot")
    if not isinstance(data, dict) or body.get("sha256") != _snapshot_digest(data):
        raise BadFile(f"'{path}' was changed after it was pinned (its snapshot does not match its sha256); "
                      "restore it or start afresh")
    return body["sha256"], data


def _snapshot_digest(data: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()

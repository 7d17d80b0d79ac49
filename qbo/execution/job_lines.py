"""What a line of a run's job journal (``jobs.jsonl``) must hold to be used.

Every command that reads the journal (a run's caps and resume, ``qbo jobs list | status``)
refuses a line that is not JSON, names no known event, or lacks what its event needs (a job
id, a fingerprint, seconds that are finite and >= 0, counts that are counts), with one line
naming the file and the line: such a journal was damaged, and guessing would risk a job
being submitted twice or a cap being passed. The events are described in
``qbo.execution.jobs``.
"""

from __future__ import annotations

import json
from typing import Any

from qbo.errors import BadFile

PENDING = ("submitted", "timeout")
ENDED = ("failed", "lost", "cancelled", "maxtime", "notfound")  # terminal: the job gives no counts
EVENTS = ("intent", "submitted", "done", "resubmit", "duplicate", "session", "usage") + PENDING + ENDED
_JOB_EVENTS = ("submitted", "done", "duplicate", "usage") + PENDING + ENDED  # lines about one job: a job id
_SECONDS = ("predicted_s", "estimated_s", "qpu_s", "charged_s", "wall_s", "max_time")


def checked_entry(entry: dict[str, Any], where: str) -> dict[str, Any]:
    """``entry`` if it is a job journal line qbo can use; one-line ``BadFile`` otherwise."""
    event = entry.get("event")
    if event not in EVENTS:
        raise BadFile(f"{where}: event {_shown(event)} is not a job journal event; the journal is damaged")
    for key in ("fingerprint", "job_id"):
        if key not in entry or not (entry[key] is None or isinstance(entry[key], str)):
            raise BadFile(f"{where}: {key} is {_shown(entry.get(key, '<missing>'))}, expected a string or null; "
                          "the journal is damaged")
    if event in _JOB_EVENTS and not entry["job_id"]:
        raise BadFile(f"{where}: a {event} line without a job id; the journal is damaged")
    if event in ("intent", "submitted", "done", "resubmit") and not entry["fingerprint"]:
        raise BadFile(f"{where}: a {event} line without a fingerprint; the journal is damaged")
    for key in _SECONDS:
        value = entry.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not 0 <= value < float("inf")):
            raise BadFile(f"{where}: {key} is {_shown(value)}, expected a finite number of seconds >= 0; "
                          "the journal is damaged")
    counts = entry.get("counts")
    if counts is not None and not (isinstance(counts, list) and all(
            isinstance(c, dict) and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in c.values())
            for c in counts)):
        raise BadFile(f"{where}: counts are not a list of bitstring counts; the journal is damaged")
    return entry


def _shown(value: Any) -> str:
    return json.dumps(value)[:40]


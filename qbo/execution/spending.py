"""What a hardware run has spent against its caps, from its job journal (``jobs.jsonl``).

IBM computes a job's billed usage some time after the job ends (``job.usage()`` reads 0
until then), and bills a Session's wall time rather than its jobs' usage. ``spent`` counts
both, never taking a 0 for a usage; ``unbilled`` lists the jobs whose usage is still to come
(``RuntimeExecutor.reconcile`` asks the service for them).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any


def _charges(entries: Sequence[dict[str, Any]]) -> tuple[dict[str, float], dict[str, float]]:
    """(charge while unbilled, billed usage) per job id: the charge is the larger of the
    plan's prediction and IBM's estimate (``usage_estimation``); the usage is IBM's final
    figure, journalled on ``done`` or later on a ``usage`` line."""
    charged: dict[str, float] = {}
    used: dict[str, float] = {}
    for entry in entries:
        job = entry.get("job_id")
        if job is None:
            continue
        if entry["event"] in ("submitted", "duplicate") and job not in charged:
            charged[job] = max(float(entry.get("predicted_s") or 0.0), float(entry.get("estimated_s") or 0.0))
        if entry.get("qpu_s") is not None:
            used[job] = float(entry["qpu_s"])
    return charged, used


def unbilled(entries: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Job id -> its charge, for every job whose final usage is not journalled yet."""
    charged, used = _charges(entries)
    return {job: c for job, c in charged.items() if job not in used}


def spent(entries: Sequence[dict[str, Any]], now: float | None = None) -> tuple[int, float]:
    """(jobs submitted, QPU seconds) of a journal. A job counts IBM's final usage once it is
    known, until then the larger of its prediction and IBM's estimate (``job.usage()`` is 0
    until IBM has computed it, so a 0 is never taken for the usage). In session mode IBM
    bills the session's wall time: the total is then at least the sessions' wall time (a
    session not journalled as closed counts the time since it opened, up to its max_time)."""
    charged, used = _charges(entries)
    seconds = sum(used.get(job, c) for job, c in charged.items())
    sessions, opened = 0.0, None
    for entry in entries:
        if entry["event"] != "session" or entry.get("mode") != "session":
            continue
        if entry.get("reason") == "opened":
            if opened is not None:  # its process died: it ran until this one opened, or its max_time
                sessions += _open_for(opened, _stamp(entry.get("time")))
            opened = entry
        elif entry.get("reason") == "closed" and opened is not None:
            sessions += float(entry.get("wall_s") or 0.0)
            opened = None
    if opened is not None:
        sessions += _open_for(opened, time.time() if now is None else now)
    return len(charged), max(seconds, sessions)


def _open_for(opened: dict[str, Any], until: float | None) -> float:
    """Seconds a session journalled as opened may have run until ``until`` (its max_time at most)."""
    start, limit = _stamp(opened.get("time")), opened.get("max_time")
    since = max(0.0, until - start) if until is not None and start is not None else float(limit or 0)
    return since if limit is None else min(since, float(limit))


def _stamp(text: Any) -> float | None:
    try:
        return datetime.fromisoformat(str(text)).timestamp()
    except ValueError:
        return None


"""What one reconcile reads of each child Job, derived once per Job *version*.

Every reconcile walks all of a JobSet's Jobs several times (``getChildJobs``, ``calculateReplicatedJob
Statuses``, ``resumeJobsIfNecessary``, the owner check of the List), and a JobSet reconciles on every
status change of any of its Jobs: for a multi-slice JobSet of hundreds of Jobs that is hundreds of label
lookups, condition scans and ``strconv.Atoi`` calls per Job status change, almost all on Jobs that did
not change. Objects read through the client are shared read-only snapshots (a new version is a new
object), so what a reconcile derives from a Job is a function of the object's identity: :class:`JobFacts`
remembers it per Job name and re-derives only when the Job read is not the very object it came from.
Upstream needs no such cache (Go reads struct fields directly); this keeps our per-Job cost near its.
:mod:`jobset.controller.child_jobs_cache` goes one step further and walks only the Jobs that changed
since the JobSet's previous List, reading their facts here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.errors import ReconcileError

_GO_INT = re.compile(r"^[+-]?[0-9]+$")


def atoi(value: str | None) -> int:
    """``strconv.Atoi``, with its error text (a missing label parses as ``""``)."""
    text = value if value is not None else ""
    if not _GO_INT.match(text):
        raise ReconcileError(f'strconv.Atoi: parsing "{text}": invalid syntax')
    return int(text)


def job_finished(job: Obj) -> tuple[bool, str]:
    """``JobFinished``: the first ``Complete``/``Failed`` condition with status True, if any."""
    for cond in (job.get("status") or {}).get("conditions") or ():
        if cond.get("type") in ("Complete", "Failed") and cond.get("status") == "True":
            return True, cond["type"]
    return False, ""


class JobFacts(NamedTuple):
    """One Job version as the reconcile sees it."""

    job: Obj
    """The version these facts are of (compared by identity)."""
    controller: tuple[object, object, object] | None
    """The controller reference's (uid, kind, apiVersion) (``metav1.GetControllerOf``), if any."""
    restart_attempt: int | str
    """``atoi`` of the ``jobset.sigs.k8s.io/restart-attempt`` label, or the error message it raises
    (raised when the reconcile reads it, as upstream)."""
    replicated_job: str | None
    """The ``jobset.sigs.k8s.io/replicatedjob-name`` label."""
    finished: str
    """``JobFinished``'s condition type: ``Complete``, ``Failed`` or ``""``."""
    ready: bool
    """``succeeded + ready >= min(parallelism, completions)`` (``calculateReplicatedJobStatuses``)."""
    active: bool
    """``status.active > 0``."""
    suspended: bool
    """``jobSuspended``."""

    def restart_attempt_value(self) -> int:
        if isinstance(self.restart_attempt, str):
            raise ReconcileError(self.restart_attempt)
        return self.restart_attempt


def derive(job: Obj) -> JobFacts:
    """The facts of ``job``, derived afresh."""
    meta = job["metadata"]
    labels = meta.get("labels") or {}
    controller = None
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller"):
            controller = (ref.get("uid"), ref.get("kind"), ref.get("apiVersion"))
            break
    try:
        attempt: int | str = atoi(labels.get(api.RESTARTS_KEY))
    except ReconcileError as err:
        attempt = str(err)
    spec = job.get("spec") or {}
    status = job.get("status") or {}
    pods = spec.get("parallelism")
    pods = 1 if pods is None else int(pods)
    completions = spec.get("completions")
    if completions is not None and int(completions) < pods:
        pods = int(completions)
    return JobFacts(
        job=job,
        controller=controller,
        restart_attempt=attempt,
        replicated_job=labels.get(api.REPLICATED_JOB_NAME_KEY),
        finished=job_finished(job)[1],
        ready=int(status.get("succeeded") or 0) + int(status.get("ready") or 0) >= pods,
        active=int(status.get("active") or 0) > 0,
        suspended=bool(spec.get("suspend") or False),
    )


FactsOf = Callable[[Obj], JobFacts]
"""What the reconcile helpers take to learn a Job's facts: :func:`derive`, or a :class:`JobFactsCache`."""


class JobFactsCache:
    """Facts per Job version, valid while the Job read is the very object they were derived from. Held by
    one controller; one entry per Job name (a newer version replaces the older)."""

    __slots__ = ("_by_id", "_by_name")

    def __init__(self) -> None:
        self._by_id: dict[int, JobFacts] = {}
        """``id(job)`` -> facts: the hit path (an entry keeps its Job alive, so the id stays its own)."""
        self._by_name: dict[tuple[str, str], JobFacts] = {}
        """(namespace, name) -> the latest facts: evicts the older version's entry."""

    def __call__(self, job: Obj) -> JobFacts:
        facts = self._by_id.get(id(job))
        if facts is not None and facts.job is job:
            return facts
        meta = job["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        older = self._by_name.get(key)
        if older is not None:
            del self._by_id[id(older.job)]
        facts = self._by_name[key] = self._by_id[id(job)] = derive(job)
        return facts

    def clear(self) -> None:
        """Forget everything (a controller restart loses its memory)."""
        self._by_id.clear()
        self._by_name.clear()

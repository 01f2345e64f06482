"""Read accessors over JobSet and Job wire dicts, with Go's zero values.

The upstream controller reads a typed ``jobset.JobSet``: an absent ``replicas`` is ``0``, an absent
``suspend`` is ``nil`` (= false), an absent ``status.restarts`` is ``0``. These helpers give the Python
port the same view of the wire form the client returns, so the policy modules never guess a default.
The small predicates (``jobSetSuspended``, ``GetSubdomain``, ...) live in upstream
``pkg/controllers/jobset_controller.go``; each function names its Go twin.
"""

from __future__ import annotations

from typing import Any

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api


def spec_of(js: Obj) -> Obj:
    """The JobSet spec (``{}`` when absent). The accessors asked several times per reconcile
    (:func:`replicated_jobs`, :func:`jobset_suspended`, :func:`failure_policy`) write this out: a call
    more per question cost more than the question, some twenty times per reconcile."""
    return js.get("spec") or {}


def status_of(js: Obj) -> Obj:
    """The JobSet status, created in place so setters can write into it (Go's struct is never nil)."""
    status = js.get("status")
    if status is None:
        status = js["status"] = {}
    return status


def replicated_jobs(js: Obj) -> list[Obj]:
    return (js.get("spec") or {}).get("replicatedJobs") or []


def replicas(rjob: Obj) -> int:
    """``rjob.Replicas`` (int32, zero when absent; the CRD default of 1 is the API server's business)."""
    return int(rjob.get("replicas") or 0)


def group_name(rjob: Obj) -> str:
    return rjob.get("groupName") or ""


def restarts(js: Obj) -> int:
    return int((js.get("status") or {}).get("restarts") or 0)


def labels_of(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def jobset_suspended(js: Obj) -> bool:
    """``jobSetSuspended``: ``ptr.Deref(js.Spec.Suspend, false)``."""
    return bool((js.get("spec") or {}).get("suspend") or False)


def job_suspended(job: Obj) -> bool:
    """``jobSuspended``: ``ptr.Deref(job.Spec.Suspend, false)``."""
    return bool((job.get("spec") or {}).get("suspend") or False)


def dns_hostnames_enabled(js: Obj) -> bool:
    """``dnsHostnamesEnabled``: only an explicit ``true`` counts (nil without webhook defaulting)."""
    network = spec_of(js).get("network")
    return network is not None and network.get("enableDNSHostnames") is True


def get_subdomain(js: Obj) -> str:
    """``GetSubdomain``: ``network.subdomain`` or the JobSet name.

    Defaulted here rather than in the webhook because a JobSet created with ``generateName`` has no name
    at admission time.
    """
    network = spec_of(js).get("network") or {}
    return network.get("subdomain") or js["metadata"]["name"]


def managed_by_external_controller(js: Obj) -> str | None:
    """``managedByExternalController``: the foreign manager's name, or None when this controller owns it."""
    manager = spec_of(js).get("managedBy")
    if manager is not None and manager != api.JOBSET_CONTROLLER_NAME:
        return str(manager)
    return None


def jobset_marked_for_deletion(js: Obj) -> bool:
    """``jobSetMarkedForDeletion``."""
    return (js.get("metadata") or {}).get("deletionTimestamp") is not None


def jobset_finished(js: Obj) -> bool:
    """``jobSetFinished``: a ``Completed`` or ``Failed`` condition with status True."""
    for cond in (js.get("status") or {}).get("conditions") or ():
        if cond.get("type") in (api.JOBSET_COMPLETED, api.JOBSET_FAILED) and cond.get("status") == "True":
            return True
    return False


def find_replicated_job_status(statuses: list[Obj] | None, name: str) -> Obj | None:
    """``findReplicatedJobStatus``."""
    for status in statuses or ():
        if status.get("name") == name:
            return status
    return None


def count(status: Obj | None, field: str) -> int:
    """A ``ReplicatedJobStatus`` counter; a missing status reads as all zeros."""
    if status is None:
        return 0
    value: Any = status.get(field)
    return int(value or 0)


def failure_policy(js: Obj) -> Obj | None:
    return (js.get("spec") or {}).get("failurePolicy")

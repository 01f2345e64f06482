"""Suspending and resuming child Jobs: port of ``suspendJobs``, ``resumeJobsIfNecessary`` and
``resumeJob`` in upstream ``pkg/controllers/jobset_controller.go``.

Both act on the ``active`` Jobs listed at the start of the reconcile; Jobs created in the same pass are
not in that list. Resume honours ``dependsOn`` and ``InOrder`` exactly like creation does, so with
``InOrder`` only the first not-yet-started ReplicatedJob is resumed per pass and the ``Suspended``
condition stays True until every ReplicatedJob has started.

``resumeJob`` is a two-write sequence: a status update that clears ``startTime`` (a started Job's pod
template is immutable), then an update that merges the ReplicatedJob's current pod-template labels,
annotations and nodeSelector (template values win), unions tolerations and schedulingGates, and sets
``suspend: false``. That is how pod-template edits made while suspended (Kueue) reach existing Jobs.
"""

from __future__ import annotations

from typing import Any

from fakecluster.api.objects import Obj, clone
from fakecluster.client.protocol import Client
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.conditions import (
    StatusUpdate,
    set_jobset_resumed_condition,
    set_jobset_suspended_condition,
)
from jobset.controller.depends_on import dependency_reached_status
from jobset.controller.job_facts import FactsOf, JobFacts, derive
from jobset.controller.spec import (
    find_replicated_job_status,
    job_suspended,
    labels_of,
    replicas,
    replicated_jobs,
    spec_of,
)
from jobset.controller.startup_policy import (
    all_replicas_started,
    in_order_startup_policy,
    set_in_order_startup_policy_in_progress_condition,
)


def suspend_jobs(client: Client, js: Obj, active: list[Obj], opts: StatusUpdate) -> None:
    """``suspendJobs``: set ``spec.suspend=true`` on every unsuspended active Job, then ``Suspended=True``."""
    for job in active:
        if not job_suspended(job):
            suspended = clone(job)
            suspended["spec"]["suspend"] = True
            client.update(suspended)
    set_jobset_suspended_condition(js, opts)


def resume_jobs_if_necessary(
    client: Client, js: Obj, active: list[Obj], statuses: list[Obj], opts: StatusUpdate,
    *, facts: FactsOf = derive,
) -> None:
    """``resumeJobsIfNecessary``: resume suspended active Jobs in spec order, then ``Suspended=False``.

    Only the suspended Jobs of ``active`` are acted on, so a caller may pass just those
    (``ChildJobs.suspended_active``). ``facts``: how each Job's labels and suspension are read
    (:mod:`jobset.controller.job_facts`). The pod templates by ReplicatedJob are gathered when the
    first Job is resumed: at nearly every reconcile none is, and this runs at every reconcile."""
    templates: dict[str, Obj] | None = None
    by_rjob: dict[str, list[JobFacts]] = {}
    for job in active:
        job_facts = facts(job)
        name = job_facts.replicated_job
        by_rjob.setdefault("" if name is None else name, []).append(job_facts)
    in_order = in_order_startup_policy(spec_of(js).get("startupPolicy"))
    rjob_replicas: dict[str, int] = {}
    for rjob in replicated_jobs(js):
        name = rjob.get("name", "")
        status = find_replicated_job_status(statuses, name)
        rjob_replicas[name] = replicas(rjob)
        if not dependency_reached_status(rjob, rjob_replicas, statuses):
            continue
        if in_order and all_replicas_started(replicas(rjob), status):
            continue
        for job_facts in by_rjob.get(name, ()):
            if job_facts.suspended:
                if templates is None:
                    templates = _pod_templates(js)
                resume_job(client, job_facts.job, templates)
        if in_order:
            set_in_order_startup_policy_in_progress_condition(js, opts)
            return
    set_jobset_resumed_condition(js, opts)


def _pod_templates(js: Obj) -> dict[str, Obj]:
    """Each ReplicatedJob's pod template, by ReplicatedJob name."""
    return {
        rjob.get("name", ""): (rjob.get("template") or {}).get("spec", {}).get("template") or {}
        for rjob in replicated_jobs(js)
    }


def resume_job(client: Client, job: Obj, templates: dict[str, Obj]) -> None:
    """``resumeJob``: clear ``status.startTime`` (status write), merge the template, unsuspend (update)."""
    job = clone(job)
    if (job.get("status") or {}).get("startTime") is not None:
        del job["status"]["startTime"]
        job = clone(client.update_status(job))  # the written Job, a shared snapshot: copy to change it
    rjob_name = labels_of(job).get(api.REPLICATED_JOB_NAME_KEY, "")
    if rjob_name:
        template = templates.get(rjob_name) or {}
        template_meta = template.get("metadata") or {}
        template_spec = template.get("spec") or {}
        pod_template = job["spec"].setdefault("template", {})
        pod_meta = pod_template.setdefault("metadata", {})
        pod_spec = pod_template.setdefault("spec", {})
        _set_or_drop(pod_meta, "labels", merge_maps(pod_meta.get("labels"), template_meta.get("labels")))
        _set_or_drop(
            pod_meta, "annotations", merge_maps(pod_meta.get("annotations"), template_meta.get("annotations"))
        )
        _set_or_drop(
            pod_spec,
            "nodeSelector",
            merge_maps(pod_spec.get("nodeSelector"), template_spec.get("nodeSelector")),
        )
        for key in ("tolerations", "schedulingGates"):
            _set_or_drop(pod_spec, key, merge_slices(pod_spec.get(key), template_spec.get(key)))
    job["spec"]["suspend"] = False
    client.update(job)


def _set_or_drop(obj: Obj, key: str, value: Any) -> None:
    """Go's ``omitempty``: an empty merged map or slice is not serialized."""
    if value:
        obj[key] = value
    else:
        obj.pop(key, None)


def merge_maps(old: dict[str, Any] | None, new: dict[str, Any] | None) -> dict[str, Any]:
    """``collections.MergeMaps``: ``old`` overlaid with ``new`` (``new`` wins on conflicts)."""
    return {**(old or {}), **(new or {})}


def merge_slices(first: list[Any] | None, second: list[Any] | None) -> list[Any]:
    """``collections.MergeSlices``: the set union of both slices.

    Go builds it from a map, so its order is random; here it is ``first`` followed by the new items of
    ``second``, which keeps runs deterministic. Items compare by value (Go compares structs, and a
    toleration's ``tolerationSeconds`` by pointer, so equal timed tolerations may appear twice there).
    """
    merged: list[Any] = []
    for item in [*(first or ()), *(second or ())]:
        if item not in merged:
            merged.append(clone(item))
    return merged

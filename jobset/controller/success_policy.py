"""The success policy: port of upstream ``pkg/controllers/success_policy.go`` (plus
``executeSuccessPolicy`` from ``jobset_controller.go``).

It runs only when at least one current-run Job succeeded and none failed. ``All`` needs as many
successful Jobs of the target ReplicatedJobs as they have replicas in total; ``Any`` needs one. An
empty ``targetReplicatedJobs`` means every ReplicatedJob. Upstream dereferences ``spec.successPolicy``
without a nil check (the webhook always defaults it); the resulting panic, recovered by
controller-runtime, becomes a reconcile error here too.
"""

from __future__ import annotations

from collections.abc import Mapping

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.child_jobs import SUCCEEDED
from jobset.controller.conditions import StatusUpdate, set_jobset_completed_condition
from jobset.controller.errors import NIL_POINTER_PANIC, ReconcileError
from jobset.controller.spec import labels_of, replicas, replicated_jobs, spec_of

_NONE = (0,) * (SUCCEEDED + 1)
"""The count tuple of a label no Job carries."""


def _success_policy(js: Obj) -> Obj:
    policy = spec_of(js).get("successPolicy")
    if policy is None:
        raise ReconcileError(NIL_POINTER_PANIC)
    return policy


def _targets(js: Obj) -> list[str]:
    return _success_policy(js).get("targetReplicatedJobs") or []


def job_matches_success_policy(js: Obj, job: Obj) -> bool:
    """``jobMatchesSuccessPolicy``: the Job's ReplicatedJob label is a target (or there are none)."""
    targets = _targets(js)
    return not targets or labels_of(job).get(api.REPLICATED_JOB_NAME_KEY, "") in targets


def replicated_job_matches_success_policy(js: Obj, rjob: Obj) -> bool:
    """``replicatedJobMatchesSuccessPolicy``."""
    targets = _targets(js)
    return not targets or rjob.get("name") in targets


def num_jobs_matching_success_policy(
    js: Obj, jobs: list[Obj], *, counts: Mapping[str | None, tuple[int, ...]] | None = None
) -> int:
    """``numJobsMatchingSuccessPolicy``: :func:`job_matches_success_policy` of each Job, with the
    targets read once (there may be hundreds of Jobs).

    ``counts``: the ``ChildJobs.counts`` of the classification ``jobs`` is the ``successful`` list of,
    if at hand. Then the answer is read from it instead of walking the Jobs: the reconcile asks on
    every pass once a Job has succeeded, so walking them makes a run's work grow with the square of its
    Jobs. Its ``succeeded`` counter per ``replicatedjob-name`` label counts exactly the successful Jobs
    of that label (``None``: no label, which upstream reads as ``""``), so summing it over the distinct
    targets counts each matching Job once, as the walk does."""
    if not jobs:
        return 0
    targets = _targets(js)
    if not targets:
        return len(jobs)
    if counts is not None and all(type(target) is str for target in targets):
        matching = 0
        for target in dict.fromkeys(targets):  # a target named twice still matches a Job once
            matching += counts.get(target, _NONE)[SUCCEEDED]
            if not target:
                matching += counts.get(None, _NONE)[SUCCEEDED]
        return matching
    return sum(labels_of(job).get(api.REPLICATED_JOB_NAME_KEY, "") in targets for job in jobs)


def num_jobs_expected_to_succeed(js: Obj) -> int:
    """``numJobsExpectedToSucceed``: 1 for ``Any``; Σ replicas of the targets for ``All``; 0 otherwise."""
    operator = _success_policy(js).get("operator")
    if operator == api.OPERATOR_ANY:
        return 1
    if operator == api.OPERATOR_ALL:
        return sum(
            replicas(rjob) for rjob in replicated_jobs(js) if replicated_job_matches_success_policy(js, rjob)
        )
    return 0


def execute_success_policy(
    js: Obj, successful: list[Obj], opts: StatusUpdate,
    *, counts: Mapping[str | None, tuple[int, ...]] | None = None,
) -> bool:
    """``executeSuccessPolicy``: mark the JobSet Completed if the policy is met; True if it was.
    ``counts``: as :func:`num_jobs_matching_success_policy` takes it."""
    if num_jobs_matching_success_policy(js, successful, counts=counts) >= num_jobs_expected_to_succeed(js):
        set_jobset_completed_condition(js, opts)
        return True
    return False

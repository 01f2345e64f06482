"""The success policy: port of upstream ``pkg/controllers/success_policy.go`` (plus
``executeSuccessPolicy`` from ``jobset_controller.go``).

It runs only when at least one current-run Job succeeded and none failed. ``All`` needs as many
successful Jobs of the target ReplicatedJobs as they have replicas in total; ``Any`` needs one. An
empty ``targetReplicatedJobs`` means every ReplicatedJob. Upstream dereferences ``spec.successPolicy``
without a nil check (the webhook always defaults it); the resulting panic, recovered by
controller-runtime, becomes a reconcile error here too.
"""

from __future__ import annotations

from fakecluster.api.objects import Obj
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.conditions import StatusUpdate, set_jobset_completed_condition
from jobset.controller.errors import NIL_POINTER_PANIC, ReconcileError
from jobset.controller.spec import labels_of, replicas, replicated_jobs, spec_of


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


def num_jobs_matching_success_policy(js: Obj, jobs: list[Obj]) -> int:
    """``numJobsMatchingSuccessPolicy``: :func:`job_matches_success_policy` of each Job, with the
    targets read once (there may be hundreds of Jobs)."""
    if not jobs:
        return 0
    targets = _targets(js)
    if not targets:
        return len(jobs)
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


def execute_success_policy(js: Obj, successful: list[Obj], opts: StatusUpdate) -> bool:
    """``executeSuccessPolicy``: mark the JobSet Completed if the policy is met; True if it was."""
    if num_jobs_matching_success_policy(js, successful) >= num_jobs_expected_to_succeed(js):
        set_jobset_completed_condition(js, opts)
        return True
    return False

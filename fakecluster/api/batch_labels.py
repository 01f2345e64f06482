"""The labels, annotations and finalizer of batch/v1 Jobs and their pods, defined once for every part
of the cluster that reads or writes them (API server defaulting, Job controller, scenario layer).

Twin of the constants block of ``k8s.io/api/batch/v1/types.go``; the names are upstream's.
"""

from __future__ import annotations

__all__ = [
    "CONTROLLER_UID_LABEL",
    "JOB_COMPLETION_INDEX_ANNOTATION",
    "JOB_CONTROLLER_NAME",
    "JOB_INDEX_FAILURE_COUNT_ANNOTATION",
    "JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION",
    "JOB_NAME_LABEL",
    "JOB_TRACKING_FINALIZER",
    "LEGACY_CONTROLLER_UID_LABEL",
    "LEGACY_JOB_NAME_LABEL",
]

_LABEL_PREFIX = "batch.kubernetes.io/"

JOB_COMPLETION_INDEX_ANNOTATION = _LABEL_PREFIX + "job-completion-index"
"""``JobCompletionIndexAnnotation``: an Indexed pod's completion index; since PodIndexLabel (GA 1.32)
also a label of the same key."""
JOB_TRACKING_FINALIZER = _LABEL_PREFIX + "job-tracking"
"""``JobTrackingFinalizer``: keeps a pod until the Job controller has counted it."""
LEGACY_JOB_NAME_LABEL = "job-name"
LEGACY_CONTROLLER_UID_LABEL = "controller-uid"
JOB_NAME_LABEL = _LABEL_PREFIX + LEGACY_JOB_NAME_LABEL
CONTROLLER_UID_LABEL = _LABEL_PREFIX + LEGACY_CONTROLLER_UID_LABEL
JOB_INDEX_FAILURE_COUNT_ANNOTATION = _LABEL_PREFIX + "job-index-failure-count"
"""``JobIndexFailureCountAnnotation``: failures of the pod's index counted towards the backoff limit."""
JOB_INDEX_IGNORED_FAILURE_COUNT_ANNOTATION = _LABEL_PREFIX + "job-index-ignored-failure-count"
"""``JobIndexIgnoredFailureCountAnnotation``: failures the pod failure policy ignored."""
JOB_CONTROLLER_NAME = "kubernetes.io/job-controller"
"""``JobControllerName``: the ``spec.managedBy`` value (or absence) that makes a Job the built-in
controller's."""

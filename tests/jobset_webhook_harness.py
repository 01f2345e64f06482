"""Builders shared by the JobSet webhook tests (``test_jobset_webhook_*.py``, ``test_features.py``):
ReplicatedJobs and JobSets shaped like upstream ``jobset_webhook_test.go``'s, and the messages it expects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakecluster.api.objects import Obj, clone

MAX_INT32 = 2**31 - 1
POD_TEMPLATE = {"spec": {"containers": [{"name": "test", "image": "bash:latest"}]}}
DNS1035_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
REPO = Path(__file__).resolve().parent.parent


def rjob(
    name: str,
    replicas: int | None = 1,
    *,
    group: str | None = "default",
    pod: Obj | None = None,
    depends_on: list[str] | None = None,
    **job_spec: Any,
) -> Obj:
    """A replicated job; ``job_spec`` keys are camelCase JobSpec fields."""
    out: Obj = {"name": name, "template": {"spec": {**job_spec, "template": clone(pod or POD_TEMPLATE)}}}
    if group is not None:
        out["groupName"] = group
    if replicas is not None:
        out["replicas"] = replicas
    if depends_on is not None:
        out["dependsOn"] = [{"name": dep, "status": "Complete"} for dep in depends_on]
    return out


def indexed(count: int) -> dict[str, Any]:
    return {"completionMode": "Indexed", "completions": count, "parallelism": count}


def jobset(*rjobs: Obj, name: str | None = "js", **spec: Any) -> Obj:
    spec.setdefault("successPolicy", {"operator": "All"})
    meta: Obj = {"namespace": "default"}
    if name is not None:
        meta["name"] = name
    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": meta,
        "spec": {"replicatedJobs": list(rjobs), **spec},
    }


NETWORK = {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
TERMINAL = "Cannot mutate parallelism or completions when JobSet is in a terminal state (Completed or Failed)"


def pvc_rjob(name: str, mount: str, *, init: bool = False, volume: bool = False) -> Obj:
    container = {
        "name": "test",
        "image": "bash:latest",
        "volumeMounts": [{"name": mount, "mountPath": "/test/path"}],
    }
    pod: Obj = {"spec": {"initContainers" if init else "containers": [container]}}
    if init:
        pod["spec"]["containers"] = [{"name": "main", "image": "bash:latest"}]
    if volume:
        pod["spec"]["volumes"] = [{"name": mount, "emptyDir": {}}]
    return rjob(name, pod=pod)

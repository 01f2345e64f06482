"""Random JobSet scenarios for ``fakecluster explore``: hypothesis strategies that draw whole scenario
files (format version 1), so a shrunk failure is already the file a contributor commits.

What is drawn: 1-3 replicated jobs (replicas, parallelism/completions, restartPolicy, backoffLimit),
AnyOrder / InOrder / a dependsOn chain (Ready or Complete), success policy (All / Any over some targets),
failure policy (maxRestarts, a rule or none), pod timings and exits per replicated job, 1-3 nodes, faults
(Conflicts, informer lag, controller latency), and interventions (suspend then resume, failPod,
deletePod, evictPod, restartController, failNode with two nodes or more).

Liveness is part of every drawn file: every pod eventually exits or is deleted, every suspend is followed
by a resume, at most one node fails and one always stays, and the run is long enough for every back-off,
so each run must end with the JobSet finished (``happens: jobset Finished``), except after a node failure
(see :func:`scenarios`). The webhook rules
(``pkg/webhooks/jobset_webhook.go``) are respected, so a drawn JobSet is never rejected.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

UNTIL = "2h"
"""Long enough for the slowest drawn run (at most 4 attempts of at most ~10 virtual minutes: pods exit
within 2 minutes, backoffLimit 2 with 10-40 s back-offs, 30 s graceful termination, a 3-minute suspend),
short enough that a controller stuck in a restart loop is caught in a few thousand events."""

DURATIONS = st.sampled_from(["0s", "1s", "2s", "5s", "10s", "30s"])


@st.composite
def replicated_job(draw: st.DrawFn, index: int) -> dict[str, Any]:
    parallelism = draw(st.integers(1, 3))
    completions = parallelism  # Indexed (JobSet's default mode) requires completions: batch validation
    restart_policy = draw(st.sampled_from(["Never", "OnFailure"]))
    job_spec: dict[str, Any] = {
        "parallelism": parallelism,
        "backoffLimit": draw(st.integers(0, 2)),
        "template": {
            "spec": {
                "restartPolicy": restart_policy,
                "containers": [{"name": "main", "image": "busybox:1.36", "command": ["sleep", "3600"]}],
            }
        },
    }
    job_spec["completions"] = completions
    if draw(st.booleans()):
        job_spec["completionMode"] = draw(st.sampled_from(["Indexed", "NonIndexed"]))
    return {"name": f"r{index}", "replicas": draw(st.integers(1, 3)), "template": {"spec": job_spec}}


@st.composite
def jobset_manifest(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(1, 3))
    rjobs = [draw(replicated_job(i)) for i in range(count)]
    spec: dict[str, Any] = {"replicatedJobs": rjobs}
    order = draw(st.sampled_from(["AnyOrder", "InOrder", "dependsOn"]) if count > 1 else st.just("AnyOrder"))
    if order == "InOrder":
        spec["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    elif order == "dependsOn":
        for i in range(1, count):
            if draw(st.booleans()):
                status = draw(st.sampled_from(["Ready", "Complete"]))
                rjobs[i]["dependsOn"] = [{"name": rjobs[i - 1]["name"], "status": status}]
    if draw(st.booleans()):
        targets = draw(st.lists(st.sampled_from([r["name"] for r in rjobs]), min_size=1, unique=True))
        spec["successPolicy"] = {"operator": draw(st.sampled_from(["All", "Any"])),
                                 "targetReplicatedJobs": sorted(targets)}
    failure: dict[str, Any] = {"maxRestarts": draw(st.integers(0, 3))}
    if draw(st.booleans()):
        action = draw(st.sampled_from(["FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts"]))
        rule: dict[str, Any] = {"name": "rule0", "action": action}
        if draw(st.booleans()):
            rule["onJobFailureReasons"] = [draw(st.sampled_from(["BackoffLimitExceeded",
                                                                 "PodFailurePolicy"]))]
        if action == "RestartJobSetAndIgnoreMaxRestarts":
            # an ignore rule could restart forever; keep liveness by restricting it to one cause that the
            # drawn pods produce only a bounded number of times
            rule["action"] = "RestartJobSet"
        failure["rules"] = [rule]
    spec["failurePolicy"] = failure
    return {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
            "metadata": {"name": "explore"}, "spec": spec}


@st.composite
def pod_rule(draw: st.DrawFn, rjob: str) -> dict[str, Any]:
    rule: dict[str, Any] = {"match": {"replicatedJob": rjob}, "pull": draw(DURATIONS),
                            "start": draw(DURATIONS), "ready": draw(DURATIONS)}
    after = draw(st.sampled_from(["5s", "30s", "60s", "120s"]))
    code = draw(st.sampled_from([0, 0, 0, 1, 137]))
    rule["exit"] = {"after": after, "code": code}
    if draw(st.booleans()):
        rule["jitter"] = draw(st.sampled_from(["1s", "3s"]))
    return rule


@st.composite
def actions(draw: st.DrawFn, rjobs: list[dict[str, Any]], nodes: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    if draw(st.booleans()):
        start = draw(st.integers(1, 60))
        out.append({"at": f"{start}s", "suspend": "explore"})
        out.append({"at": f"{start + draw(st.integers(1, 120))}s", "resume": "explore"})
    for _ in range(draw(st.integers(0, 2))):
        rjob = draw(st.sampled_from(rjobs))
        verb = draw(st.sampled_from(["failPod", "deletePod", "evictPod"]))
        target = {"pod": f"{rjob['name']}[0/0]"}
        action: dict[str, Any] = {"when": f"first {rjob['name']} pods Running",
                                  "after": f"{draw(st.integers(0, 10))}s"}
        if verb == "failPod":
            action[verb] = {**target, "exitCode": draw(st.sampled_from([1, 137]))}
        else:
            action[verb] = target
        out.append(action)
    if draw(st.booleans()):
        out.append({"at": f"{draw(st.integers(0, 90))}s", "restartController": "jobset"})
    if nodes >= 2 and draw(st.booleans()):
        node = f"node-{draw(st.integers(0, nodes - 1))}"
        out.append({"at": f"{draw(st.integers(1, 90))}s", "failNode": {"node": node}})
    return out


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    """One whole scenario file (as a dict), ready for ``yaml.safe_dump``."""
    manifest = draw(jobset_manifest())
    rjobs = manifest["spec"]["replicatedJobs"]
    nodes = draw(st.integers(1, 3))
    cluster: dict[str, Any] = {"nodes": [{"name": "node", "count": nodes}]}
    if draw(st.booleans()):
        cluster["faults"] = {"conflictRate": draw(st.sampled_from([0.1, 0.3]))}
    if draw(st.booleans()):
        cluster["informerLag"] = draw(st.sampled_from(["100ms", "500ms"]))
    if draw(st.booleans()):
        cluster["latency"] = {"jobset": draw(st.sampled_from(["1s", "3s"]))}
    drawn_actions = draw(actions(rjobs, nodes))
    # A pod lost with its node stays Terminating until the Node object is deleted, and the Job controller
    # holds its terminal condition while pods terminate (pkg/controller/job/job_controller.go,
    # enactJobFinished): such a run may rightly never finish, so only the invariants judge it.
    lost_node = any("failNode" in a for a in drawn_actions)
    return {
        "name": "explored JobSet",
        "seed": draw(st.integers(0, 2**16)),
        "until": UNTIL,
        "cluster": cluster,
        "jobset": manifest,
        "pods": [draw(pod_rule(r["name"])) for r in rjobs],
        "actions": drawn_actions,
        "expect": [{"final": {"count": {"jobsets": 1}}} if lost_node else {"happens": "jobset Finished"}],
    }

"""KWOK ``Stage`` objects that play one group of pods the way a scenario's ``pods:`` rules say.

KWOK moves a pod on a fake node from stage to stage: each stage's selector matches the pod's current
state, waits its delay, then writes a status (``next.statusTemplate``). The chain below reproduces the
fake kubelet (``fakecluster/kubelet/kubelet.py``): admission (``ContainerCreating``, IPs, ``startTime``)
at once; ``Running`` after ``pull + start``; ``Ready`` after ``ready``; the container's exit after the
rest of ``exit.after`` (or the command's ``sleep``) with its exit code (``Succeeded`` for 0, else
``Failed``); on deletion, exit 143 after ``terminate``, then the pod object goes once it is terminal and
the Job controller has removed its finalizer (so no two stages of a chain ever match the same pod
state). Per-phase ``jitter`` becomes ``jitterDurationMilliseconds`` (KWOK draws the
delay uniformly between the two). Selectors use the stage API's legacy ``key``/``operator`` form with
``next.statusTemplate``, which KWOK v0.6 through v0.8 all accept (``pkg/apis/v1alpha1/stage_types.go``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["StageTimings", "pod_stages"]


@dataclass(frozen=True, slots=True)
class StageTimings:
    """One group's delays in seconds (``math.inf``: never), as the fake kubelet would use them."""

    creating: float
    ready: float
    exit_after: float
    exit_code: int
    terminate: float
    jitter: float | Mapping[str, float]
    """One amount for every delay, or per phase (format 1.1 ``jitter: {pull: 9s}``)."""

    def jitter_of(self, *phases: str) -> float:
        """The jitter of the delay made of ``phases`` (a stage's one delay may cover two phases)."""
        if isinstance(self.jitter, Mapping):
            return sum(self.jitter.get(p, 0.0) for p in phases)
        return self.jitter


_NOT_DELETED = {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}
_DELETED = {"key": ".metadata.deletionTimestamp", "operator": "Exists"}


def _phase(*phases: str) -> dict[str, Any]:
    return {"key": ".status.phase", "operator": "In", "values": list(phases)}


def _ready(status: str) -> dict[str, Any]:
    return {"key": '.status.conditions.[] | select( .type == "Ready" ) | .status', "operator": "In",
            "values": [status]}


def _delay(seconds: float, jitter: float) -> dict[str, int]:
    delay = {"durationMilliseconds": round(seconds * 1000)}
    if jitter > 0:
        delay["jitterDurationMilliseconds"] = round((seconds + jitter) * 1000)
    return delay


_CONDITIONS = """\
conditions:
- {{type: Initialized, status: "True", lastTransitionTime: {{{{ $now | Quote }}}}}}
- {{type: ContainersReady, status: "{ready}", lastTransitionTime: {{{{ $now | Quote }}}}{reason}}}
- {{type: Ready, status: "{ready}", lastTransitionTime: {{{{ $now | Quote }}}}{reason}}}
"""


def _template(state: str, *, ready: bool, phase: str) -> str:
    """A status template: conditions, one status per container in ``state``, and the phase."""
    reason = "" if ready else ", reason: ContainersNotReady"
    lines = ["{{ $now := Now }}", _CONDITIONS.format(ready="True" if ready else "False", reason=reason)]
    started = "false" if "terminated" in state else "true"
    lines.append("containerStatuses:\n{{ range .spec.containers }}\n- name: {{ .name | Quote }}\n"
                 "  image: {{ .image | Quote }}\n  restartCount: 0\n"
                 f"  ready: {'true' if ready else 'false'}\n  started: {started}"
                 f"\n  state:\n{state}\n{{{{ end }}}}")
    lines.append(f"phase: {phase}")
    return "\n".join(lines) + "\n"


_CREATING = """\
{{ $now := Now }}
conditions:
- {type: Initialized, status: "True", lastTransitionTime: {{ $now | Quote }}}
- {type: ContainersReady, status: "False", lastTransitionTime: {{ $now | Quote }}, reason: ContainersNotReady}
- {type: Ready, status: "False", lastTransitionTime: {{ $now | Quote }}, reason: ContainersNotReady}
containerStatuses:
{{ range .spec.containers }}
- name: {{ .name | Quote }}
  image: {{ .image | Quote }}
  restartCount: 0
  ready: false
  started: false
  state:
    waiting: {reason: ContainerCreating}
{{ end }}
hostIP: {{ NodeIPWith .spec.nodeName | Quote }}
podIP: {{ PodIPWith .spec.nodeName ( or .spec.hostNetwork false ) ( or .metadata.uid "" ) \
( or .metadata.name "" ) ( or .metadata.namespace "" ) | Quote }}
phase: Pending
startTime: {{ $now | Quote }}
"""
_RUNNING_STATE = "    running: {startedAt: {{ $now | Quote }}}"


def _terminated(code: int) -> str:
    reason = "Completed" if code == 0 else "Error"
    return (f"    terminated: {{exitCode: {code}, reason: {reason}, startedAt: {{{{ $now | Quote }}}}, "
            "finishedAt: {{ $now | Quote }}}")


def _stage(name: str, labels: Mapping[str, str], expressions: list[dict[str, Any]], next_: dict[str, Any],
           delay: dict[str, int] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "resourceRef": {"apiGroup": "v1", "kind": "Pod"},
        "selector": {"matchLabels": dict(labels), "matchExpressions": expressions},
        "next": next_,
    }
    if delay is not None:
        spec["delay"] = delay
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Stage", "metadata": {"name": name}, "spec": spec}


def pod_stages(prefix: str, labels: Mapping[str, str], timings: StageTimings) -> list[dict[str, Any]]:
    """The stage chain for the pods ``labels`` select; ``prefix`` names the stages (``<prefix>-ready``)."""
    stages = [
        _stage(f"{prefix}-create", labels,
               [_NOT_DELETED, {"key": ".status.podIP", "operator": "DoesNotExist"}],
               {"statusTemplate": _CREATING}),
        _stage(f"{prefix}-running", labels,
               [_NOT_DELETED, _phase("Pending"), {"key": ".status.podIP", "operator": "Exists"}],
               {"statusTemplate": _template(_RUNNING_STATE, ready=False, phase="Running")},
               _delay(timings.creating, timings.jitter_of("pull", "start"))),
    ]
    if math.isfinite(timings.ready):
        stages.append(_stage(f"{prefix}-ready", labels, [_NOT_DELETED, _phase("Running"), _ready("False")],
                             {"statusTemplate": _template(_RUNNING_STATE, ready=True, phase="Running")},
                             _delay(timings.ready, timings.jitter_of("ready"))))
    if math.isfinite(timings.exit_after):
        # exit.after counts from Running; the stage waits from the last write (Ready, when there is one)
        after_ready = max(timings.exit_after - (timings.ready if math.isfinite(timings.ready) else 0.0), 0.0)
        ready_state = "True" if math.isfinite(timings.ready) else "False"
        phase = "Succeeded" if timings.exit_code == 0 else "Failed"
        stages.append(_stage(f"{prefix}-exit", labels, [_NOT_DELETED, _phase("Running"), _ready(ready_state)],
                             {"statusTemplate": _template(_terminated(timings.exit_code), ready=False,
                                                          phase=phase)},
                             _delay(after_ready, timings.jitter_of("exit"))))
    stages.append(_stage(f"{prefix}-terminate", labels, [_DELETED, _phase("Pending", "Running")],
                         {"statusTemplate": _template(_terminated(143), ready=False, phase="Failed")},
                         _delay(timings.terminate, timings.jitter_of("terminate"))))
    stages.append(_stage(f"{prefix}-delete", labels,
                         [_DELETED, _phase("Succeeded", "Failed"),
                          {"key": ".metadata.finalizers", "operator": "DoesNotExist"}],
                         {"delete": True}))
    return stages

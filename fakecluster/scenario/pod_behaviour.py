"""The ``pods:`` rules of a scenario as the behaviour resolver the kubelet and scheduler ask per pod.

A resolver is a plain callable (:data:`fakecluster.kubelet.pod_timings.BehaviourResolver`): the cluster
knows nothing of scenarios. Both the YAML runner and :class:`fakecluster.session.FakeCluster` build their
cluster with this one resolver, so a rule means the same thing in a file and in a Python test.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace

from fakecluster.api.objects import Obj
from fakecluster.kubelet.pod_timings import PodTimings
from fakecluster.scenario.format import PodIdentity, PodRule, resolve_pod_rule
from fakecluster.scenario.ordinals import PodOrdinals
from fakecluster.scenario.programs import JobSetNetwork, program_spec
from fakecluster.workload_plugin import WorkloadPlugin

__all__ = ["PodBehaviour"]


class PodBehaviour:
    """Resolve the rules for a pod once (by uid) into the timings the emulators use.

    What the rules resolve to depends only on which of them match, so pods matching the same rules (all
    workers of a replicated job, typically) share one resolution. A ``program`` is templated per pod (its
    own targets) from ``networks``: each JobSet's hostnames and subdomain, by JobSet name.
    """

    def __init__(
        self,
        rules: Sequence[PodRule],
        plugin: WorkloadPlugin,
        networks: Mapping[str, JobSetNetwork] | None = None,
        ordinals: PodOrdinals | None = None,
    ) -> None:
        self.rules = list(rules)
        self.plugin = plugin
        self.ordinals = ordinals if ordinals is not None else PodOrdinals(plugin)
        """``podIndex`` of a NonIndexed pod is its ordinal (:mod:`fakecluster.scenario.ordinals`)."""
        self.networks: Mapping[str, JobSetNetwork] = {} if networks is None else networks
        self._timings: dict[str, PodTimings] = {}
        self._timings_by_rules: dict[tuple[int, ...], PodTimings] = {}

    def __call__(self, pod: Obj) -> PodTimings:
        uid = pod["metadata"]["uid"]
        cached = self._timings.get(uid)
        if cached is not None:
            return cached
        slot = self.ordinals.slot(pod)
        identity = PodIdentity(
            jobset=slot.owner if slot else None,
            replicated_job=slot.group if slot else None,
            job_index=slot.job_index if slot else None,
            pod_index=slot.pod_index if slot else None,
            attempt=slot.attempt if slot else None,
            labels=pod["metadata"].get("labels") or {},
        )
        matching = tuple(i for i, rule in enumerate(self.rules) if rule.match.matches(identity))
        timings = self._timings_by_rules.get(matching)
        if timings is None:
            timings = self._timings_by_rules[matching] = self._resolve(identity)
        if timings.program is not None:  # templated per pod: its own targets
            rule = resolve_pod_rule(self.rules, identity)
            assert rule.program is not None
            js = self.networks.get(identity.jobset or "")
            timings = replace(timings, program=program_spec(rule.program, identity, js))
        self._timings[uid] = timings
        return timings

    def note(self, pod: Obj) -> str | None:
        """What the rules fix for this pod that a stuck diagnosis should say (``ready: never`` overrides
        any probe; ``exit: never`` runs until deleted); None for a pod never resolved or nothing fixed."""
        timings = self._timings.get(pod["metadata"]["uid"])
        if timings is None:
            return None
        notes = []
        if timings.ready is not None and math.isinf(timings.ready):
            notes.append("pods rule: ready never")
        if timings.exit_after is not None and math.isinf(timings.exit_after):
            notes.append("pods rule: exit never")
        return ", ".join(notes) or None

    def _resolve(self, identity: PodIdentity) -> PodTimings:
        rule = resolve_pod_rule(self.rules, identity)
        jitter = rule.jitter if isinstance(rule.jitter, dict) else None
        return PodTimings(
            schedule=rule.schedule or 0.0,
            pull=rule.pull or 0.0,
            start=rule.start or 0.0,
            ready=rule.ready,
            exit_after=rule.exit.after if rule.exit is not None else None,
            exit_code=rule.exit.code if rule.exit is not None else 0,
            exit_runs=tuple((e.after, e.code) for e in (rule.exit.runs if rule.exit else ())),
            terminate=rule.terminate or 0.0,
            jitter=0.0 if jitter is not None else (rule.jitter or 0.0),  # type: ignore[arg-type]
            jitter_by_phase=tuple(sorted(jitter.items())) if jitter else (),
            program=program_spec(rule.program, identity, self.networks.get(identity.jobset or ""))
            if rule.program is not None else None,
            probe_fail_for=rule.probes.fail_for() if rule.probes is not None else {},
            pull_failures=rule.pull_failures or 0,
        )

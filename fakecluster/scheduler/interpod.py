"""Inter-pod filters of the scheduler: InterPodAffinity and PodTopologySpread (``DoNotSchedule`` only).

These are the two default filter plugins whose verdict depends on the pods already placed, not only on
the node. Both are split as upstream splits them: a *pre-filter* pass over the placed pods builds counts
per topology pair once per scheduling cycle (:func:`prefilter`), then a cheap per-node check reads them
(:meth:`InterPodState.filter`).

- InterPodAffinity (``pkg/scheduler/framework/plugins/interpodaffinity/filtering.go``): the incoming
  pod's required affinity terms must all find a matching pod in the node's domain of each term's
  ``topologyKey`` (a node lacking a topology label fails) -- except the first pod of a group that matches
  its own terms while no pod anywhere matches them (``satisfyPodAffinity``); its required anti-affinity
  terms must find no matching pod in the node's domain; and no placed pod's required anti-affinity term
  may match the incoming pod in that domain (``satisfyExistingPodsAntiAffinity``). Affinity failures are
  ``UnschedulableAndUnresolvable``, anti-affinity failures ``Unschedulable`` (preemption might help).
- PodTopologySpread (``pkg/scheduler/framework/plugins/podtopologyspread/filtering.go``): for every
  ``whenUnsatisfiable: DoNotSchedule`` constraint, pods matching its selector (plus ``matchLabelKeys``) in
  the pod's namespace are counted per domain over the nodes that pass the pod's node affinity and carry
  every constraint's key (``nodeAffinityPolicy: Honor``, ``nodeTaintsPolicy: Ignore``, the defaults);
  a node whose domain would exceed ``maxSkew`` above the least-populated domain fails (``minDomains``
  counts missing domains as empty). A node without the topology label is unresolvable.

Term namespaces follow ``schedutil.GetNamespacesFromPodAffinityTerm``: no ``namespaces`` and no
``namespaceSelector`` means the pod's own namespace; a ``namespaceSelector`` is matched against the
labels every namespace carries, ``kubernetes.io/metadata.name: <name>`` (the fake serves no Namespace
objects with other labels). Placed pods count from binding until they finish or go away, as the
resource tally does; terminating pods still count for affinity and, unlike upstream's spread counting,
for spread too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fakecluster.api.objects import Obj
from fakecluster.api.selectors import Requirement, Selector, from_label_selector
from fakecluster.scheduler.filters import NodeInfo, node_affinity_matches

REASON_AFFINITY_RULES = "node(s) didn't match pod affinity rules"
"""``ErrReasonAffinityRulesNotMatch``."""
REASON_ANTI_AFFINITY_RULES = "node(s) didn't match pod anti-affinity rules"
"""``ErrReasonAntiAffinityRulesNotMatch``."""
REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"
"""``ErrReasonExistingAntiAffinityRulesNotMatch``."""
REASON_SPREAD = "node(s) didn't match pod topology spread constraints"
"""``podtopologyspread.ErrReasonConstraintsNotMatch``."""
REASON_SPREAD_MISSING_LABEL = REASON_SPREAD + " (missing required label)"
"""``podtopologyspread.ErrReasonNodeLabelNotMatch``."""
INTERPOD_REASONS = frozenset({REASON_AFFINITY_RULES, REASON_ANTI_AFFINITY_RULES,
                              REASON_EXISTING_ANTI_AFFINITY, REASON_SPREAD, REASON_SPREAD_MISSING_LABEL})
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """``framework.AffinityTerm``: a ``PodAffinityTerm`` with its selectors parsed."""

    namespaces: frozenset[str]
    namespace_selector: Selector | None
    selector: Selector
    topology_key: str

    def matches(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """``PodMatchesTermsNamespaceAndSelector``."""
        if namespace not in self.namespaces and (
                self.namespace_selector is None
                or not self.namespace_selector.matches({NAMESPACE_NAME_LABEL: namespace})):
            return False
        return self.selector.matches(labels)


def _terms(namespace: str, raw: Iterable[Obj]) -> tuple[AffinityTerm, ...]:
    out = []
    for term in raw:
        namespaces = frozenset(term.get("namespaces") or ())
        ns_selector = term.get("namespaceSelector")
        if not namespaces and ns_selector is None:
            namespaces = frozenset((namespace,))
        out.append(AffinityTerm(
            namespaces,
            None if ns_selector is None else from_label_selector(ns_selector),
            from_label_selector(term.get("labelSelector")),
            term.get("topologyKey", ""),
        ))
    return tuple(out)


def required_terms(namespace: str, spec: Obj, kind: str) -> tuple[AffinityTerm, ...]:
    """The ``requiredDuringSchedulingIgnoredDuringExecution`` terms of ``podAffinity`` or
    ``podAntiAffinity`` (``kind``) of a pod spec."""
    affinity = spec.get("affinity")
    if not affinity:
        return ()
    section = affinity.get(kind)
    if not section:
        return ()
    return _terms(namespace, section.get("requiredDuringSchedulingIgnoredDuringExecution") or ())


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """A ``DoNotSchedule`` ``TopologySpreadConstraint`` with ``matchLabelKeys`` folded into its selector
    (``filterTopologySpreadConstraints``)."""

    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int
    self_match: bool


def spread_constraints(labels: Mapping[str, str], spec: Obj) -> tuple[SpreadConstraint, ...]:
    out = []
    for raw in spec.get("topologySpreadConstraints") or ():
        if raw.get("whenUnsatisfiable") != "DoNotSchedule":
            continue
        selector = from_label_selector(raw.get("labelSelector"))
        keys = [k for k in raw.get("matchLabelKeys") or () if k in labels]
        if keys:
            extra = tuple(Requirement(k, "In", (labels[k],)) for k in keys)
            selector = Selector(selector.requirements + extra, selector.match_nothing)
        out.append(SpreadConstraint(int(raw.get("maxSkew", 1)), raw.get("topologyKey", ""), selector,
                                    int(raw.get("minDomains") or 1), selector.matches(labels)))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PodConstraints:
    """Everything the inter-pod filters read from the incoming pod."""

    namespace: str
    labels: Mapping[str, str]
    affinity: tuple[AffinityTerm, ...]
    anti_affinity: tuple[AffinityTerm, ...]
    spread: tuple[SpreadConstraint, ...]

    @classmethod
    def of(cls, pod: Obj) -> PodConstraints:
        meta = pod["metadata"]
        namespace = meta.get("namespace", "")
        labels = meta.get("labels") or {}
        spec = pod["spec"]
        return cls(namespace, labels, required_terms(namespace, spec, "podAffinity"),
                   required_terms(namespace, spec, "podAntiAffinity"), spread_constraints(labels, spec))

    @property
    def any(self) -> bool:
        return bool(self.affinity or self.anti_affinity or self.spread)


@dataclass(slots=True)
class PlacedPod:
    """What the inter-pod filters read from a pod bound to a node. Never changed once made (not frozen:
    the scheduler's record of a bound pod is one, :class:`~fakecluster.scheduler.scheduler._Assigned`,
    made per pod, and a frozen dataclass sets each field through ``object.__setattr__``)."""

    namespace: str
    labels: Mapping[str, str]
    node: str
    anti_affinity: tuple[AffinityTerm, ...]


def _add(counts: dict[Pair, int], pair: Pair) -> None:
    counts[pair] = counts.get(pair, 0) + 1


@dataclass(slots=True)
class InterPodState:
    """The pre-filter state of one scheduling cycle."""

    pod: PodConstraints
    spec: Obj
    existing_anti: dict[Pair, int]
    affinity_counts: dict[Pair, int]
    anti_counts: dict[Pair, int]
    spread_counts: list[dict[str, int]]
    spread_min: list[int]

    def filter(self, node: NodeInfo) -> tuple[list[str], bool]:
        """([], False) if the node passes both plugins, else the first failing plugin's reason and whether
        it is unresolvable. PodTopologySpread runs before InterPodAffinity, as in the default order."""
        labels = node.labels
        for i, constraint in enumerate(self.pod.spread):
            value = labels.get(constraint.topology_key)
            if value is None:
                return [REASON_SPREAD_MISSING_LABEL], True
            skew = self.spread_counts[i].get(value, 0) + int(constraint.self_match) - self.spread_min[i]
            if skew > constraint.max_skew:
                return [REASON_SPREAD], False
        if not self._satisfies_affinity(labels):
            return [REASON_AFFINITY_RULES], True
        for term in self.pod.anti_affinity:
            value = labels.get(term.topology_key)
            if value is not None and self.anti_counts.get((term.topology_key, value), 0) > 0:
                return [REASON_ANTI_AFFINITY_RULES], False
        if self.existing_anti and any(self.existing_anti.get(pair, 0) > 0 for pair in labels.items()):
            return [REASON_EXISTING_ANTI_AFFINITY], False
        return [], False

    def _satisfies_affinity(self, labels: Mapping[str, str]) -> bool:
        """``satisfyPodAffinity``."""
        pods_exist = True
        for term in self.pod.affinity:
            value = labels.get(term.topology_key)
            if value is None:
                return False
            if self.affinity_counts.get((term.topology_key, value), 0) <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The first pod of a group with affinity to itself: allowed while nothing else matches.
        return not self.affinity_counts and all(t.matches(self.pod.namespace, self.pod.labels)
                                                for t in self.pod.affinity)


def prefilter(pod: PodConstraints, spec: Obj, placed: Iterable[PlacedPod], with_anti: Iterable[PlacedPod],
              nodes: Mapping[str, NodeInfo]) -> InterPodState:
    """``PreFilter`` of both plugins: counts per topology pair over the placed pods."""
    existing_anti: dict[Pair, int] = {}
    for other in with_anti:
        node = nodes.get(other.node)
        if node is None:
            continue
        for term in other.anti_affinity:
            value = node.labels.get(term.topology_key)
            if value is not None and term.matches(pod.namespace, pod.labels):
                _add(existing_anti, (term.topology_key, value))
    affinity_counts: dict[Pair, int] = {}
    anti_counts: dict[Pair, int] = {}
    spread_counts: list[dict[str, int]] = [{} for _ in pod.spread]
    eligible: dict[str, None] = {}
    if pod.spread:
        keys = [c.topology_key for c in pod.spread]
        plain = "nodeSelector" not in spec and "affinity" not in spec
        for name, node in nodes.items():
            if all(k in node.labels for k in keys) and (plain or node_affinity_matches(spec, node)):
                eligible[name] = None
                for i, constraint in enumerate(pod.spread):
                    spread_counts[i].setdefault(node.labels[constraint.topology_key], 0)
    if pod.any:
        for other in placed:
            node = nodes.get(other.node)
            if node is None:
                continue
            if pod.affinity and all(t.matches(other.namespace, other.labels) for t in pod.affinity):
                for term in pod.affinity:
                    value = node.labels.get(term.topology_key)
                    if value is not None:
                        _add(affinity_counts, (term.topology_key, value))
            for term in pod.anti_affinity:
                value = node.labels.get(term.topology_key)
                if value is not None and term.matches(other.namespace, other.labels):
                    _add(anti_counts, (term.topology_key, value))
            if other.node in eligible and other.namespace == pod.namespace:
                for i, constraint in enumerate(pod.spread):
                    if constraint.selector.matches(other.labels):
                        value = node.labels[constraint.topology_key]
                        spread_counts[i][value] += 1
    spread_min = []
    for i, constraint in enumerate(pod.spread):
        counts = spread_counts[i]
        least = min(counts.values()) if counts else 0
        spread_min.append(0 if len(counts) < constraint.min_domains else least)
    return InterPodState(pod, spec, existing_anti, affinity_counts, anti_counts, spread_counts, spread_min)


__all__ = [
    "INTERPOD_REASONS", "AffinityTerm", "InterPodState", "PlacedPod", "PodConstraints", "SpreadConstraint",
    "prefilter", "required_terms", "spread_constraints",
]

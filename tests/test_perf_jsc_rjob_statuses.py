"""``calculateReplicatedJobStatuses`` (jobset/controller/child_jobs.py) builds each entry as a literal and
reads the current entries only with the RestartJob gate: the same statuses, and the same JobSet after, as the
general form it replaced (kept here), for any spec names (repeated, empty, absent), counts and current
status."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fakecluster.api.objects import Obj, clone
from jobset.controller.child_jobs import (
    _COUNTERS,
    _NO_COUNTS,
    ChildJobs,
    ChildJobsSummary,
    calculate_replicated_job_statuses,
)
from jobset.controller.spec import replicated_jobs, status_of


def general(js: Obj, owned: ChildJobs, *, restart_job: bool = False) -> list[Obj]:
    """The form before: every entry a dict of ``zip(_COUNTERS, ...)``, the current entries always read."""
    counts = owned.counts()
    existing = {s.get("name"): s for s in status_of(js).get("replicatedJobsStatus") or ()}
    result = []
    for name in dict.fromkeys(r.get("name", "") for r in replicated_jobs(js)):
        values = counts.get(name, _NO_COUNTS) if name else _NO_COUNTS
        item: Obj = {"name": name, **dict(zip(_COUNTERS, values, strict=True))}
        if restart_job and name in existing:
            for key in ("jobRestarts", "jobRestartsCountTowardsMax"):
                if existing[name].get(key):
                    item[key] = list(existing[name][key])
        result.append(item)
    return result


NAME = st.sampled_from(["a", "b", ""])
RJOB = st.one_of(st.fixed_dictionaries({"name": NAME}), st.just({}))
COUNTS = st.dictionaries(st.sampled_from(["a", "b", "", None]), st.tuples(*[st.integers(0, 3)] * 5))
ENTRY = st.fixed_dictionaries(
    {"name": NAME},
    optional={"jobRestarts": st.lists(st.integers(0, 2), max_size=2),
              "jobRestartsCountTowardsMax": st.lists(st.integers(0, 2), max_size=2)},
)
STATUS = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"replicatedJobsStatus": st.lists(ENTRY,
                                                                                                  max_size=3)}))


@settings(max_examples=400, deadline=None)
@given(rjobs=st.lists(RJOB, max_size=4), counts=COUNTS, status=STATUS, restart_job=st.booleans(),
       no_spec=st.booleans())
def test_the_statuses_match_the_general_form(rjobs: list[Obj], counts: dict[Any, tuple[int, ...]],
                                             status: Obj | None, restart_job: bool, no_spec: bool) -> None:
    js: Obj = {"metadata": {"name": "js"}, "spec": {} if no_spec else {"replicatedJobs": rjobs}}
    if status is not None:
        js["status"] = status
    other = clone(js)
    owned = ChildJobs(summary=ChildJobsSummary(names=frozenset(), counts=counts))
    fast = calculate_replicated_job_statuses(js, owned, restart_job=restart_job)
    assert fast == general(other, owned, restart_job=restart_job)
    assert [list(item) for item in fast] == [list(item) for item in general(other, owned,
                                                                             restart_job=restart_job)]
    assert js == other  # the same JobSet after (an absent status created alike)

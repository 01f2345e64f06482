"""The JobSet controller, a Python port of upstream ``pkg/controllers`` (kubernetes-sigs/jobset, v1alpha2).

One module per upstream concern: :mod:`.jobset_controller` (``jobset_controller.go``'s reconcile loop),
:mod:`.child_jobs`, :mod:`.service`, :mod:`.suspend`, :mod:`.conditions` (also from
``jobset_controller.go``), :mod:`.startup_policy`, :mod:`.depends_on`, :mod:`.success_policy`,
:mod:`.failure_policy`, :mod:`.ttl_after_finished`, :mod:`.volume_claim_policy`, and :mod:`.events`
(client-go's events recorder). The controller talks to the cluster only through
:class:`fakecluster.client.Client`.
"""

from jobset.controller.events import EventRecorder
from jobset.controller.jobset_controller import JobSetController

__all__ = ["EventRecorder", "JobSetController"]

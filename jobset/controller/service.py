"""The headless Service behind pod DNS hostnames: port of ``createHeadlessSvcIfNecessary`` in upstream
``pkg/controllers/jobset_controller.go``.

Only when ``network.enableDNSHostnames`` is explicitly true. The Service is named after the subdomain;
an existing Service of that name (whoever owns it) is left alone: no adoption, no update. Because the
controller watches the Services it owns, deleting it triggers a reconcile that recreates it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fakecluster.api.errors import ApiError, NotFound
from fakecluster.api.objects import Obj, owner_reference
from fakecluster.client.protocol import Client
from jobset.api.v1alpha2 import jobset_types as api
from jobset.controller.events import EVENT_TYPE_WARNING
from jobset.controller.spec import dns_hostnames_enabled, get_subdomain, spec_of

if TYPE_CHECKING:
    from jobset.controller.events import EventRecorder


def headless_service(js: Obj) -> Obj:
    """The Service upstream creates: no labels, no ports, ``clusterIP: None``, selecting the JobSet's pods."""
    network = spec_of(js).get("network") or {}
    publish = network.get("publishNotReadyAddresses")
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {
            "name": get_subdomain(js),
            "namespace": js["metadata"].get("namespace", ""),
            "ownerReferences": [owner_reference(js)],
        },
        "spec": {
            "clusterIP": "None",
            "selector": {api.JOBSET_NAME_KEY: js["metadata"]["name"]},
            "publishNotReadyAddresses": True if publish is None else bool(publish),
        },
    }


def create_headless_svc_if_necessary(client: Client, recorder: EventRecorder, js: Obj) -> None:
    """``createHeadlessSvcIfNecessary``: a create failure is reported at once as a
    ``HeadlessServiceCreationFailed`` Warning event (not gated on the status write) and fails the
    reconcile."""
    if not dns_hostnames_enabled(js):
        return
    try:
        client.get("Service", js["metadata"].get("namespace", ""), get_subdomain(js))
        return
    except NotFound:
        pass
    try:
        client.create(headless_service(js))
    except ApiError as err:
        recorder.eventf(
            js,
            None,
            EVENT_TYPE_WARNING,
            api.HEADLESS_SERVICE_CREATION_FAILED_REASON,
            "Reconciling",
            err.message,
        )
        raise

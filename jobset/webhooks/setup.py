"""Installing the JobSet kind and its webhooks into an API server: upstream ``pkg/webhooks/setup.go`` plus
the CRD and ``config/components/webhook/manifests.yaml``.

Webhook names and operations are the ones in the upstream manifests: the mutating ``mjobset.kb.io``
runs on CREATE only (an update is never defaulted), the validating ``vjobset.kb.io`` on CREATE and
UPDATE. A denial reaches the client as upstream's does: the webhook returns ``apierrors.NewInvalid``,
controller-runtime passes its ``metav1.Status`` through, and the API server prefixes the message with
``admission webhook "vjobset.kb.io" denied the request: `` (``webhookerrors.ToStatusErr``), keeping the
422 code, the ``Invalid`` reason and the causes.
"""

from __future__ import annotations

import random

from fakecluster.api.objects import Obj
from fakecluster.apiserver.errors import ApiError
from fakecluster.apiserver.resources import ResourceType
from fakecluster.apiserver.server import ApiServer
from jobset.api.v1alpha2 import jobset_types as api
from jobset.api.v1alpha2.crd import JobSetStrategy
from jobset.features import FeatureGates
from jobset.webhooks.apimachinery import invalid
from jobset.webhooks.jobset_webhook.create import validate_create
from jobset.webhooks.jobset_webhook.defaulting import default_jobset
from jobset.webhooks.jobset_webhook.update import validate_update
from jobset.webhooks.pod_webhook import (
    MUTATING_POD_WEBHOOK_NAME,
    VALIDATING_POD_WEBHOOK_NAME,
    PodWebhook,
    WebhookDenied,
)
from jobset.webhooks.unsupported import unsupported_features

__all__ = ["MUTATING_WEBHOOK_NAME", "VALIDATING_WEBHOOK_NAME", "jobset_resource_type", "register",
           "register_pod_webhooks"]

MUTATING_WEBHOOK_NAME = "mjobset.kb.io"
"""Path ``/mutate-jobset-x-k8s-io-v1alpha2-jobset``, verbs: create, failurePolicy: Fail."""
VALIDATING_WEBHOOK_NAME = "vjobset.kb.io"
"""Path ``/validate-jobset-x-k8s-io-v1alpha2-jobset``, verbs: create, update, failurePolicy: Fail."""


def jobset_resource_type() -> ResourceType:
    """The JobSet CRD as the API server sees it: namespaced, status subresource, no unconditional
    updates, generation bumped by any change outside metadata and status."""
    return ResourceType(
        api.KIND,
        api.API_VERSION,
        api.PLURAL,
        generation="custom",
        unconditional_update=False,
        model=api.JobSet,
        status_model=api.JobSetStatus,
        strategy=JobSetStrategy(),
    )


def register(server: ApiServer, gates: FeatureGates, rng: random.Random) -> None:
    """Register the JobSet kind and both JobSet webhooks on ``server``.

    ``rng`` only feeds the name the validating webhook invents for a ``generateName``-only object
    (``names.SimpleNameGenerator``); pass a generator of its own so it never shifts other draws.
    """
    server.register(jobset_resource_type())

    def lookup_pvc(namespace: str, name: str) -> Obj | None:
        try:
            return server.get("PersistentVolumeClaim", namespace, name)
        except ApiError as err:
            if err.reason == "NotFound":  # also a cluster that serves no PVCs at all
                return None
            raise

    def mutate(operation: str, obj: Obj, old: Obj | None) -> Obj:
        return default_jobset(obj)

    def validate(operation: str, obj: Obj, old: Obj | None) -> None:
        if operation == "CREATE":
            validate_create(obj, gates, rng, lookup_pvc)
        elif operation == "UPDATE" and old is not None:
            validate_update(obj, old, gates)
        refused = unsupported_features(obj, gates)
        if refused:
            raise invalid(api.KIND, api.GROUP, str((obj.get("metadata") or {}).get("name") or ""), refused)

    server.register_admission(api.KIND, MUTATING_WEBHOOK_NAME, mutating=mutate, operations=("CREATE",))
    server.register_admission(
        api.KIND, VALIDATING_WEBHOOK_NAME, validating=validate, operations=("CREATE", "UPDATE")
    )
    register_pod_webhooks(server)


def register_pod_webhooks(server: ApiServer) -> None:
    """``setupWebhookForPod``: ``mpod.kb.io`` and ``vpod.kb.io`` on pod CREATE. The defaulting hook only
    adds a label, pod (anti-)affinity terms or a nodeSelector entry, all schema-valid, and copies what it
    changes, so the Job controller's vouched-for, donated pod creates stay cheap."""
    webhook = PodWebhook(server)

    def denied(err: WebhookDenied) -> ApiError:
        return ApiError(403, "Forbidden", str(err))  # controller-runtime's admission.Denied

    def mutate(operation: str, obj: Obj, old: Obj | None) -> Obj | None:
        try:
            return webhook.default(obj)
        except WebhookDenied as err:
            raise denied(err) from None

    def validate(operation: str, obj: Obj, old: Obj | None) -> None:
        try:
            webhook.validate_create(obj)
        except WebhookDenied as err:
            raise denied(err) from None

    server.register_admission("Pod", MUTATING_POD_WEBHOOK_NAME, mutating=mutate, operations=("CREATE",),
                              keeps_schema_valid=True, copies_on_write=True)
    server.register_admission("Pod", VALIDATING_POD_WEBHOOK_NAME, validating=validate, operations=("CREATE",))

"""JobSet admission webhooks: the Python twin of upstream ``pkg/webhooks/jobset_webhook.go``.

Upstream's one Go file is split by verb to keep modules short: :mod:`.jobset_webhook` (``Default``,
``ValidateCreate``, ``ValidateUpdate``), :mod:`.setup` (registration,
``setup.go``) and :mod:`.apimachinery` (the Kubernetes library helpers whose wording the messages
reuse). The Pod webhooks (``pod_webhook.go``, exclusive placement) are not part of this package.
"""

from jobset.webhooks.jobset_webhook.create import validate_create
from jobset.webhooks.jobset_webhook.defaulting import default_jobset
from jobset.webhooks.jobset_webhook.update import validate_update
from jobset.webhooks.setup import (
    MUTATING_WEBHOOK_NAME,
    VALIDATING_WEBHOOK_NAME,
    jobset_resource_type,
    register,
)

__all__ = [
    "MUTATING_WEBHOOK_NAME",
    "VALIDATING_WEBHOOK_NAME",
    "default_jobset",
    "jobset_resource_type",
    "register",
    "validate_create",
    "validate_update",
]

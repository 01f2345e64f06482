"""The JobSet webhook: the Python twin of upstream ``pkg/webhooks/jobset_webhook.go``, split by verb:
:mod:`.defaulting` (``Default``), :mod:`.create` (``ValidateCreate``), :mod:`.update` (``ValidateUpdate``)."""

from jobset.webhooks.jobset_webhook.create import validate_create
from jobset.webhooks.jobset_webhook.defaulting import default_jobset
from jobset.webhooks.jobset_webhook.update import validate_update

__all__ = ["default_jobset", "validate_create", "validate_update"]

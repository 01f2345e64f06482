"""Label selectors as the API server evaluates them; defined in :mod:`fakecluster.api.selectors`, beside the
API types (k8s.io/apimachinery/pkg/labels), so that clients use them without importing the server."""

from fakecluster.api.selectors import Requirement, Selector, as_selector

__all__ = ["Requirement", "Selector", "as_selector"]

"""The fake API server: store, resource strategies, admission chain, watches and garbage collection."""

from fakecluster.api.errors import ApiError, FieldError
from fakecluster.apiserver.resources import ResourceType, Strategy
from fakecluster.apiserver.server import ApiServer, WatchEvent

__all__ = ["ApiError", "ApiServer", "FieldError", "ResourceType", "Strategy", "WatchEvent"]

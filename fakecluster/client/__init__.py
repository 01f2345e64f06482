"""Clients of the fake API server: the protocol controllers code against, the in-process client, and
the wrappers that put a lagging informer cache or injected Conflicts between a controller and the server."""

from fakecluster.client.forwarding import ForwardingClient
from fakecluster.client.local import LocalClient
from fakecluster.client.protocol import Client, SelectorLike

__all__ = ["Client", "ForwardingClient", "LocalClient", "SelectorLike"]

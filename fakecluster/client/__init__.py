"""Clients of the fake API server: the protocol controllers code against (:mod:`.protocol`), the cluster
components' internal extension of it (:mod:`.internal`), the in-process client (:mod:`.local`), and the
wrappers that put a lagging informer cache (:mod:`.informer`) or injected Conflicts (:mod:`.conflicts`)
between a controller and the server.

The package itself re-exports only the protocol, so that importing it (as the JobSet controller does)
never loads the API server."""

from fakecluster.client.protocol import Client, SelectorLike, WatchEvent, WatchHandler

__all__ = ["Client", "SelectorLike", "WatchEvent", "WatchHandler"]

"""Where a campaign's chunks run: a ``concurrent.futures.Executor``, local or distributed.

The seam is the standard library's: anything with ``submit`` returning futures will do. Two are built in:
a local process pool (all cores by default) and a Dask cluster (``distributed.Client(...).get_executor()``,
the optional extra ``fakecluster[dask]``). A chunk is a pure function of its :class:`~fakecluster.explore.
campaign.ChunkSpec`, so every executor gives the same findings for the same seeds.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any


def local_executor(workers: int | None = None) -> Executor:
    """A process pool of ``workers`` processes (default: one per core). Forked, so a worker starts with
    the parent's imports instead of importing the cluster again."""
    return ProcessPoolExecutor(
        max_workers=workers or os.cpu_count() or 1, mp_context=multiprocessing.get_context("fork")
    )


class DaskExecutor(Executor):
    """The ``concurrent.futures`` face of a Dask cluster; closing it closes the client, not the cluster."""

    def __init__(self, address: str) -> None:
        try:
            from distributed import Client
        except ImportError as err:  # the optional extra is not installed
            raise RuntimeError(
                "--dask needs dask.distributed: pip install 'fakecluster[dask]'"
            ) from err
        self._client = Client(address)
        self._executor = self._client.get_executor(pure=False)

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        return self._executor.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._executor.shutdown(wait=wait)
        self._client.close()

"""Random exploration: drawn scenarios, invariants, shrinking to a committed regression scenario.

:mod:`.campaign` draws and runs scenarios in deterministic chunks and shrinks failures; :mod:`.executors`
runs chunks on a local process pool or a Dask cluster. The drawing itself is the workload's
(``scenario_strategy`` of the plugin; JobSet: ``jobset/explore.py``).
"""

from fakecluster.explore.campaign import CampaignResult, ChunkSpec, Finding, campaign, run_chunk
from fakecluster.explore.executors import DaskExecutor, local_executor

__all__ = [
    "CampaignResult", "ChunkSpec", "DaskExecutor", "Finding", "campaign", "local_executor", "run_chunk",
]

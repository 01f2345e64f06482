"""Random exploration: drawn scenarios, invariants, shrinking to a committed regression scenario.

:mod:`.campaign` draws and runs scenarios in deterministic chunks and shrinks failures; :mod:`.executors`
runs chunks on a local process pool or a Dask cluster. The drawing itself is the workload's
(``scenario_strategy`` of the plugin; JobSet: ``jobset/explore.py``).

The package itself imports nothing: every ``fakecluster`` command builds the ``explore`` verb's parser
(:mod:`.command`), and the campaign's imports (Hypothesis, multiprocessing) cost some 60 ms that only
``explore`` needs. Import the parts: ``from fakecluster.explore.campaign import campaign``.
"""

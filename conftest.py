"""Root conftest. Scenario files (``scenarios/**/*.yaml``) become pytest items through the plugin the
package installs (a ``pytest11`` entry point), not through anything here.

Hypothesis runs derandomized and without per-example deadlines: the suite must give the same verdict on
every run and machine (a property test's examples come from a fixed seed), and wall-clock deadlines would
make verdicts depend on machine load, which is exactly what this project refuses to do.

The snapshot guard is on for the whole suite: a test or a controller that changes an object it was
handed instead of copying it fails with ``SnapshotMutated``.
"""

import os

from hypothesis import settings

# Every API server the suite builds checks that no caller changes a shared read-only snapshot
# (fakecluster/apiserver/snapshots.py); subprocesses (the CLI tests) inherit it.
os.environ.setdefault("FAKECLUSTER_CHECK_SNAPSHOTS", "1")


settings.register_profile("fakecluster", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("fakecluster")

"""Root conftest. Scenario files (``scenarios/**/*.yaml``) become pytest items through the plugin the
package installs (a ``pytest11`` entry point), not through anything here.

Hypothesis runs derandomized and without per-example deadlines: the suite must give the same verdict on
every run and machine (a property test's examples come from a fixed seed), and wall-clock deadlines would
make verdicts depend on machine load, which is exactly what this project refuses to do.
"""

from hypothesis import settings

settings.register_profile("fakecluster", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("fakecluster")

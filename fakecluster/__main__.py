"""``python -m fakecluster``: the command line (:mod:`fakecluster.cli`)."""

import sys

from fakecluster.cli import main

if __name__ == "__main__":  # not when a spawned worker process imports it
    sys.exit(main())

"""``python -m fakecluster``: the command line (:mod:`fakecluster.cli`)."""

import sys

from fakecluster.cli import main

sys.exit(main())

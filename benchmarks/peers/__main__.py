"""``python -m benchmarks.peers``: run peer optimizers (see :mod:`.cli`)."""

import sys

from .cli import main

sys.exit(main())

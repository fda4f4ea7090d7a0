"""``python -m treebo``: the ``treebo`` command (see :mod:`treebo.cli`)."""

import sys

from .cli import main

sys.exit(main())

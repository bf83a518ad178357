"""``python -m localmem.cli``: the same command as the ``localmem`` script."""

import sys

from .app import main

sys.exit(main())

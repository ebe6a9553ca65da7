"""``python -m bilinear``: the command line, as the ``bilinear`` script runs it."""

import sys

from .cli import main

sys.exit(main())

"""``python -m bilinear``: the command line, as the ``bilinear`` script runs it."""

import sys

from .cli import main

if __name__ == "__main__":  # (importing the module, as tests that walk the package do, runs nothing)
    sys.exit(main())

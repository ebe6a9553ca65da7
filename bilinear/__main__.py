"""``python -m bilinear`` and the ``bilinear`` script: the command line.

The command line's modules load here, inside :func:`main`: a Ctrl-C in the half second that takes,
before the command line's own handlers exist, had printed a traceback (on every rank of an MPI job)."""

import sys


def main() -> int:
    try:
        from .cli import main as command_line
    except KeyboardInterrupt:
        print("bilinear: interrupted", file=sys.stderr)
        return 130
    return command_line()


if __name__ == "__main__":  # (importing the module, as tests that walk the package do, runs nothing)
    sys.exit(main())

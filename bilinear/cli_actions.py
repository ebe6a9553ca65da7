"""The argparse actions the command line's options use."""

from __future__ import annotations

import argparse


class StoreOnce(argparse.Action):
    """An option of one value, which given twice is a usage error: argparse keeps the last without a
    word (`verify … --mod 2 --mod 3` proved modulo 3 alone; `import -o a.bl -o b.bl` wrote b.bl)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = parser.__dict__.setdefault("_given", {})
        if self.dest in given:
            parser.error(f"{'/'.join(self.option_strings)} given twice ({given[self.dest]}, then {values}); give it once")
        given[self.dest] = values
        setattr(namespace, self.dest, values)


class Given(StoreOnce):
    """Store the value, and that it was given: ``--levels 1`` beside ``--levels-schemes`` cannot be
    told from the default otherwise (it had been dropped without a word)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        super().__call__(parser, namespace, values, option_string)
        setattr(namespace, f"{self.dest}_given", True)

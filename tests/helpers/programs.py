"""Straight-line programs as the optimizer's passes write them: named sums (name, terms) in order,
and forms over inputs and sums.  What the tests check of every pass: each form's value, and every
sum defined before it is used."""

from __future__ import annotations

from fractions import Fraction


def fractions_of(form: dict) -> dict:
    """The form with Fraction coefficients (hypothesis draws ints)."""
    return {k: Fraction(v) for k, v in form.items()}


def expand(form: dict, definitions: dict) -> dict:
    """The form's value over the inputs, through the named sums in ``definitions``."""
    total = {}
    for name, coef in form.items():
        inner_form = expand(definitions[name], definitions) if name in definitions else {name: 1}
        for inner, inner_coef in inner_form.items():
            total[inner] = total.get(inner, 0) + coef * inner_coef
    return {k: v for k, v in total.items() if v}


def defined_before_use(sums: list, inputs) -> bool:
    """Whether every sum reads only inputs and sums defined before it."""
    defined = set(inputs)
    for name, terms in sums:
        if not all(term in defined for term in terms):
            return False
        defined.add(name)
    return True


#: a..f, a..e, .., ab: a + b is in all five, a + c and b + c in four, c + d in three (independent forms).
NESTED = [{name: Fraction(1) for name in "abcdef"[:size]} for size in (6, 5, 4, 3, 2)]


class Draws:
    """A random.Random stand-in for the kernel split and pair elimination: the seeded order is the
    targets' own, ``random`` draws ``draw``, the split's own choices (of a nudge, of a slack: tuples)
    take ``options[pick]``, and pair elimination's choice (a list of pairs) takes the last."""

    def __init__(self, draw: float, pick: int):
        self.draw, self.pick = draw, pick

    def sample(self, population, k):
        return list(population)[:k]

    def random(self):
        return self.draw

    def choice(self, options):
        return options[self.pick] if isinstance(options, tuple) else options[-1]

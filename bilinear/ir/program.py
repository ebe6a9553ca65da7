"""A file's definitions, resolved: the unit the verifier, lowering and the API take."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .algorithm import Algorithm
from .schedule import Schedule

Definition = Union[Algorithm, Schedule]


@dataclass(frozen=True)
class Program:
    """Everything one file defines, with what it ``use``s, resolved and checked.

    ``own`` names the definitions written in the file itself (in order); ``uses`` the files read
    through ``use``, resolved, each once, in the order read (a file only passing others on too).
    """

    path: str
    algorithms: tuple[Algorithm, ...]
    schedules: tuple[Schedule, ...]
    own: tuple[str, ...]
    uses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        # a definition is found by its name: a second of one name (built in Python; a .bl file is refused
        # for it where it stands) was never found, and compile ran the first
        names = [definition.name for definition in (*self.algorithms, *self.schedules)]
        if twice := next((name for name in names if names.count(name) > 1), None):
            raise ValueError(f"{twice} is defined twice in the program {self.path}")

    def algorithm(self, name: str) -> Algorithm | None:
        return next((a for a in self.algorithms if a.name == name), None)

    def schedule(self, name: str) -> Schedule | None:
        return next((s for s in self.schedules if s.name == name), None)

    def definition(self, name: str) -> Definition | None:
        return self.algorithm(name) or self.schedule(name)

    def own_definitions(self) -> tuple[Definition, ...]:
        return tuple(d for d in (self.definition(name) for name in self.own) if d is not None)

    @property
    def main(self) -> Definition:
        """The last definition written in the file: what ``compile`` and ``run`` use."""
        return self.own_definitions()[-1]

    def narrowed(self, name: str) -> Program:
        """The program with ``name``'s definition as its only own one (its main), what it uses kept."""
        return Program(self.path, self.algorithms, self.schedules, (name,), self.uses)

    def unused(self) -> tuple[str, ...]:
        """The file's own definitions that ``main`` neither is nor schedules: what compile and run
        leave out (two algorithms in one file: the first)."""
        main = self.main
        used = {main.name, getattr(main, "algorithm", main.name)}
        return tuple(d.name for d in self.own_definitions() if d.name not in used)

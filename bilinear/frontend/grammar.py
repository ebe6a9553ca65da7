"""The .bl grammar (``grammar.lark``, shipped inside the package) and its one LALR parser."""

from __future__ import annotations

from importlib import resources

from lark import Lark

GRAMMAR = resources.files(__package__).joinpath("grammar.lark").read_text(encoding="utf-8")
LARK = Lark(GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=True)

"""The .bl grammar (``grammar.lark``, shipped inside the package), its one LALR parser, and that parser
with sums of names lexed whole."""

from __future__ import annotations

from importlib import resources

from lark import Lark

from ..ir.names import KEYWORDS

GRAMMAR = resources.files(__package__).joinpath("grammar.lark").read_text(encoding="utf-8")
# The language: parse_text falls back to it wherever NAME_SUMS' parser stops, and its errors are the ones said.
LARK = Lark(GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=True)

# `M1 + M2 - B[1,3]` where an expression begins, a sum of names with no coefficient, as one token that
# frontend.name_sums reads: a Kronecker product's equations are hundreds of thousands of such terms, and
# lark's cost is per token and per tree node (<27,27,27;12167>'s 3.8 MB read in 15.1-16.7 s, 4.9-6.9 s with this:
# benchmarks/large_read.py).  The lookahead after it keeps it from ending where a term binds tighter (`M1 + M2*2`,
# `M1 + M2 [1,2]`) or inside a name (`M1 + M23*2` is not `M1 + M2`, then `3*2`), and it never begins at a keyword
# (`stage + x` is a stage's header to LARK), so a text means what LARK makes of it; one it does not take at all
# is read by LARK.
NAME_SUMS = rf"""
%extend expr: NAME_SUM -> name_sum
NAME_SUM.3: /(?:[-+][\t \f]*)?(?!(?:{"|".join(sorted(KEYWORDS))})(?![A-Za-z0-9_]))/ _TERM (/[\t \f]*[-+][\t \f]*/ _TERM)+ /(?![\t \f]*[*\/\[\w.(])/
_TERM: BLOCK | NAME
"""
NAME_SUMS_LARK = Lark(GRAMMAR + NAME_SUMS, parser="lalr", propagate_positions=True, maybe_placeholders=True)

"""Syntax errors in words: what was found, and what the grammar expected there."""

from __future__ import annotations

import difflib
import re
import unicodedata

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..diagnostics import Diagnostic
from ..ir import Span
from ..ir.names import KEYWORDS
from .grammar import LARK


# The words a definition begins with.
DEFINITION_KEYWORDS = ("algorithm", "table", "schedule", "use")
# What follows a misspelt keyword for a header to be recognised, to the end of the line: `x <2,2,2;7>:`,
# `x for y:` (with properties), `"f.bl"` (a use's file, after as few as two letters: `us`); letters only
# before it: lower-case where the file may be no .bl text (prose starts otherwise), capitals too in a
# .bl file's syntax error (`Algorithm`: the language's keywords are lower-case).
HEADER_AFTER = re.compile(r'^([A-Za-z]{3,}\s+(\w+\s*<[\d,;\s]*>\s*:|\w+\s+for\s+\w+\s*:[\w\s,]*)'
                          r'|[A-Za-z]{2,}\s+(?P<file>"[^"]*\.bl"))\s*(#.*)?$')
DEFINITION_HEADER = re.compile(r"^(algorithm|table|schedule)\b")
# A stage's name glued to its keyword (`stagesecond:`), which no statement's line begins with.
GLUED_STAGE = re.compile(r"^(\s*)(stage(\w+))\s*:")


# A stage's or a temporary's line: two words and a colon, which no statement begins with.
SCHEDULE_LINE = re.compile(r"^(\s*)([A-Za-z]+)\s+\w+\s*:(?P<temp>\s*[ABC]\s*(#.*)?$)?")


def misspelt_keyword(line: str, capitals: bool = False) -> str | None:
    """The keyword a line that reads as a definition's header misspells (`algoritm x <2,2,2;7>:`:
    algorithm; `uze "f.bl"`: use; with ``capitals``, `Algorithm x <2,2,2;7>:` too); None for a line
    that is no header or begins with the keyword itself."""
    stripped = line.strip()
    first = stripped.split(maxsplit=1)[0] if stripped else ""
    if first in DEFINITION_KEYWORDS or not (header := HEADER_AFTER.match(stripped)):
        return None
    if not capitals and not first.islower():  # a foreign file's prose ("Algorithm notes for review:")
        return None
    word = first.lower()
    if header.group("file") and _one_edit_apart(word, "use"):
        return "use"  # difflib's 0.75 takes no changed letter in three (`uze`, `ues`)
    close = difflib.get_close_matches(word, DEFINITION_KEYWORDS, n=1, cutoff=0.75)
    return close[0] if close else None


def _one_edit_apart(word: str, keyword: str) -> bool:
    """Whether one letter added, dropped or changed, or two neighbours swapped, turn word into keyword."""
    if abs(len(word) - len(keyword)) == 1:
        shorter, longer = sorted((word, keyword), key=len)
        return any(longer[:i] + longer[i + 1 :] == shorter for i in range(len(longer)))
    differ = [i for i, (a, b) in enumerate(zip(word, keyword)) if a != b] if len(word) == len(keyword) else []
    if len(differ) == 2 and differ[1] == differ[0] + 1:
        first, last = differ
        return word[first : last + 1] == keyword[last] + keyword[first]
    return len(differ) == 1


_FRIENDLY = {
    "NAME": "a name",
    "BLOCK": "a name",  # `B[1,2]`, lexed whole where a name may stand
    "INT": "a whole number",
    "DECIMAL": "a number",
    "STRING": 'a quoted file name ("file.bl")',
    "_NL": "the end of the line",
    "$END": "the end of the file",
    "SECTION": "U:, V: or W:",
}
# A table's row is one token (ROW), read in Python: where one may begin or go on, say what its entries begin with.
_ROW_WORDS = ("'+'", "'-'", "a whole number")


def expected_words(names) -> str:
    """Terminal names as a sentence says them: `'+', '-', a whole number or the end of the line`."""
    words = []
    for name in sorted(set(names)):
        if name in _FRIENDLY:
            words.append(_FRIENDLY[name])
            continue
        if name == "ROW":
            words.extend(_ROW_WORDS)
            continue
        if name.startswith("_") and (keyword := name[1:].lower()) in KEYWORDS:  # `_STAGE: /stage(?!…)/`
            words.append(f"'{keyword}'")
            continue
        try:
            pattern = LARK.get_terminal(name).pattern
        except KeyError:
            words.append(name.lower())
            continue
        words.append(f"'{pattern.value}'" if pattern.type == "str" else name.lower())
    words = set(words)
    if "a number" in words:
        words.discard("a whole number")  # where any number may stand, do not list integers apart
    return _or(sorted(words))


# the characters of a token an error quotes: a longer one is cut short
QUOTED_TOKEN = 40


def _or(words: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _found(error: UnexpectedInput, text: str) -> str:
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            return "end of file"
        if token.type == "_NL":
            return "end of line"
        if len(token) > QUOTED_TOKEN:  # a 60 MB name made a 60 MB message: the quoted line is cut short too
            return f"'{token[:QUOTED_TOKEN]}…' (a token of {len(token)} characters)"
        return f"'{token}'"
    if isinstance(error, UnexpectedCharacters):
        return _character(text[error.pos_in_stream])
    return "end of file"


def _character(char: str) -> str:
    """``'x'``; with its code point and name where one cannot see it (U+00A0 NO-BREAK SPACE) or where
    it may look like an ASCII one ('−' U+2212 MINUS SIGN, 'Α' U+0391 GREEK CAPITAL LETTER ALPHA)."""
    visible = char.isprintable() and not char.isspace()
    if visible and char.isascii():
        return f"'{char}'"
    name = unicodedata.name(char, "")
    code = f"U+{ord(char):04X}" + (f" ({name})" if name else "")
    return f"'{char}' {code}" if visible else f"character {code}"


def _end_of_text(text: str) -> tuple[int, int]:
    """Where a file that ends too early ends: after its last line of more than blanks and a comment
    (the row-less `W:` four lines up, not the blank line after it); the last line if none."""
    lines = text.replace("\r\n", "\n").split("\n")  # as lark counts lines (not at U+2028)
    while len(lines) > 1 and lines[-1] == "":
        lines.pop()
    for number in range(len(lines), 0, -1):
        code = lines[number - 1].split("#", 1)[0].rstrip()
        if code.strip():
            return number, len(code) + 1
    return len(lines), len(lines[-1]) + 1


def _accepted(error: UnexpectedInput, text: str) -> set[str]:
    """The terminals the parser takes where it stopped.  At an unexpected character lark's `allowed`
    is what the lexer could match in that parser state, lookaheads LALR merged from other places
    included (`=`, `->` and `)` after a name in an equation); the interactive parser it leaves on the
    error tries each terminal, as `accepts` does for an unexpected token."""
    if isinstance(error, UnexpectedToken):
        accepted = _accepted_before_reducing(error, text) or error.accepts or error.expected
        return _after_a_row(error, accepted)
    parser = getattr(error, "interactive_parser", None)  # absent where lark's LALR parser did not raise it
    if parser is not None and (accepted := parser.accepts()):
        return _after_a_row(error, accepted)
    return getattr(error, "allowed", None) or getattr(error, "expected", None) or set()


def _accepted_before_reducing(error: UnexpectedToken, text: str) -> set[str]:
    """The terminals the parser took before the unexpected token.  Lark reduces on it before it
    raises (`B11` to a sum, where the newline after `(A11 * B11` is among the merged lookaheads), so the
    state it raises in no longer takes `*`, `/` or `[`: ``text`` is parsed again up to that token."""
    if error.token.type == "$END":
        return set()
    replay = LARK.parse_interactive(text if text.endswith("\n") else text + "\n")  # as parse_text parsed it
    try:
        for token in replay.iter_parse():
            if token.start_pos == error.token.start_pos:
                return replay.accepts()
    except UnexpectedInput:  # the lexer raised it, with nothing reduced: lark's own set stands
        pass
    return set()


_OPEN_ENTRY = re.compile(r"[+/-][ \t\f]*$")  # a row that stops after a sign or a '/'
_WITH_DENOMINATOR = re.compile(r"/[ \t\f]*[0-9]+[ \t\f]*$")


def _after_a_row(error: UnexpectedInput, accepted: set[str]) -> set[str]:
    """What the grammar takes where the parser stopped right after a table's row.  The row is one
    token (ROW), so lark accepts only the end of the line there; the row itself takes another entry,
    a `/` after a whole number, and only a whole number after a sign or a `/`."""
    parser = getattr(error, "interactive_parser", None)
    values = parser.parser_state.value_stack if parser is not None else ()
    if not values or not isinstance(values[-1], Token) or values[-1].type != "ROW":
        return accepted
    if _OPEN_ENTRY.search(values[-1]):
        return {"INT"}
    return accepted | {"ROW"} | (set() if _WITH_DENOMINATOR.search(values[-1]) else {"SLASH"})


def syntax_error(error: UnexpectedInput, text: str, path: str) -> Diagnostic:
    line, column = max(error.line, 1), max(error.column, 1)
    if header := (_misspelt_header(text, line, path) or _misspelt_schedule_keyword(text, line, path)
                  or _glued_stage(error, text, line, path)):
        return header
    if isinstance(error, UnexpectedEOF) or (isinstance(error, UnexpectedToken) and error.token.type == "$END"):
        line, column = _end_of_text(text)
    expected = _accepted(error, text)
    width = len(str(error.token)) if isinstance(error, UnexpectedToken) and error.token.type not in ("$END", "_NL") else 1
    span = Span(path, line, column, line, column + width)
    message = f"unexpected {_found(error, text)}"
    if expected:
        message += f"; expected {expected_words(expected)}"
    return Diagnostic(message, span, notes=_keyword_as_name(text, line, column) + _glued_keyword(error, expected))


def _source_line(text: str, line: int) -> str:
    lines = text.replace("\r\n", "\n").split("\n")  # as lark counts lines
    return lines[line - 1] if line <= len(lines) else ""


def _misspelt_header(text: str, line: int, path: str) -> Diagnostic | None:
    """The error at a misspelt keyword where the line it stopped on reads as a definition's header.
    After a definition the parser takes the word for a name that begins an equation or a statement,
    and stops at the next word (`second` in `algoritm second <1,1,1;1>:`), which is not the mistake."""
    here = _source_line(text, line)
    if (keyword := misspelt_keyword(here, capitals=True)) is None:
        return None
    word = here.split(maxsplit=1)[0]
    start = len(here) - len(here.lstrip()) + 1
    expected = _or(sorted(f"'{k}'" for k in DEFINITION_KEYWORDS))
    return Diagnostic(f"unexpected '{word}'; expected {expected}", Span(path, line, start, line, start + len(word)),
                      notes=(f"did you mean {keyword}?",))


def _misspelt_schedule_keyword(text: str, line: int, path: str) -> Diagnostic | None:
    """The error at `stagee q:` or `tmp Y: B`: the parser read the first as a statement beginning with
    a name, and stopped at q."""
    if not (found := SCHEDULE_LINE.match(_source_line(text, line))):
        return None
    indent, word = found.group(1, 2)
    keyword = "temp" if found.group("temp") else "stage"
    if word == keyword or not (word.lower() == keyword or _one_edit_apart(word.lower(), keyword)):
        return None
    return Diagnostic(f"unexpected '{word}'; expected '{keyword}'",
                      Span(path, line, len(indent) + 1, line, len(indent) + 1 + len(word)), notes=(f"did you mean {keyword}?",))


def _glued_stage(error: UnexpectedInput, text: str, line: int, path: str) -> Diagnostic | None:
    """The error at `stagesecond:` after a statement, where the parser took the word for a name and stopped
    at its colon (where it stopped at the word itself, :func:`_glued_keyword` notes it)."""
    if not (found := GLUED_STAGE.match(_source_line(text, line))) or error.column == len(found.group(1)) + 1:
        return None
    headers = [DEFINITION_HEADER.match(before) for before in text.replace("\r\n", "\n").split("\n")[: line - 1]]
    if [header.group(1) for header in headers if header][-1:] != ["schedule"]:  # no stage in an algorithm or table
        return None
    indent, word, name = found.group(1, 2, 3)
    return Diagnostic(f"unexpected '{word}'; expected 'stage'", Span(path, line, len(indent) + 1, line,
                      len(indent) + 1 + len(word)), notes=(f"did you mean stage {name}?",))


def _glued_keyword(error: UnexpectedInput, expected: set[str]) -> tuple[str, ...]:
    """A note where a name begins with a keyword the parser takes there (`stagefirst:`: a space left out).
    Not for `for` and `temp`, which begin words meant whole (`format`, `temporary`)."""
    if not isinstance(error, UnexpectedToken) or error.token.type != "NAME":
        return ()
    word = str(error.token)
    for keyword in (*DEFINITION_KEYWORDS, "stage"):
        if f"_{keyword.upper()}" in expected and word.startswith(keyword) and len(word) > len(keyword):
            return (f"did you mean {keyword} {word[len(keyword):]}?",)
    return ()


def _keyword_as_name(text: str, line: int, column: int) -> tuple[str, ...]:
    """A note where a keyword is assigned to as a name (`algorithm = ...`: the parser took it for
    a header, `stage s: stage = A11` for a stage, and said only that '=' was unexpected)."""
    here = _source_line(text, line)
    word = re.search(r"\b([A-Za-z_]\w*)\s*$", here[: column - 1])
    if word and word.group(1) in KEYWORDS and here[column - 1 :].startswith("="):
        return (f"{word.group(1)} is a keyword of the language; a name must be another word",)
    return ()

"""The one jinja2 environment every CUDA template is rendered with.

Templates only arrange what Python computed into a plain dataclass; they do
no arithmetic of their own.  Undefined names are errors, never blanks.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import jinja2

from ..paths import templates_dir


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render(template: str, **context) -> str:
    """Render ``templates/<template>`` with ``context``."""
    return environment().get_template(template).render(**context)


#: What C or an editor could read as the end of a line (control characters but a tab, Unicode line and
#: paragraph separators), or that could turn a comment's text around (format characters: bidi overrides).
_UNSAFE_IN_COMMENTS = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def comment_line(text: str) -> str:
    """``text`` (a source's comment, a file name: anything a user wrote) as one ``//`` line that stays
    one: each unsafe character written as its escape (a newline in a file name had started a line of
    code), and a trailing backslash followed by words (it joined the next line, an include guard, to the
    comment)."""
    escaped = "".join(ch.encode("unicode_escape").decode("ascii")
                      if unicodedata.category(ch) in _UNSAFE_IN_COMMENTS and ch != "\t" else ch for ch in text).rstrip()
    if escaped.endswith(("\\", "??/")):  # ??/ too: a trigraph's backslash, to C99 and C++14 compilers
        escaped += " (end of line)"
    return f"// {escaped}" if escaped else "//"

"""The one jinja2 environment every CUDA template is rendered with.

Templates only arrange what Python computed into a plain dataclass; they do
no arithmetic of their own.  Undefined names are errors, never blanks.
"""

from __future__ import annotations

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

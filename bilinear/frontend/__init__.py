"""The .bl language: grammar, parser, name resolution and file loading."""

from .loader import load_program, program_from_text

__all__ = ["load_program", "program_from_text"]

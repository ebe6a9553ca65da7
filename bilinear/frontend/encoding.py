"""How a source file's bytes become text, alike wherever a file is read: UTF-8 (a byte order mark, as
some editors write, is not part of the text), or UTF-16 with its byte order mark (as PowerShell 5's
`>` writes); every line ending made LF."""

from __future__ import annotations

UTF16_MARKS = (b"\xff\xfe", b"\xfe\xff")


def lines_ended_by_lf(text: str) -> str:
    """The text with every line ending, CRLF or a lone CR (classic Mac OS), made LF, as Python's
    universal newlines and editors read them: the parser and the quoted lines count LFs only, and
    converting lone CRs only in a file without any LF left CR lines with one final CRLF one line."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def utf16_text(data: bytes) -> str | None:
    """The text of UTF-16 with its byte order mark, or None where ``data`` is not that: a NUL-free
    decoding of it (its NULs would otherwise have called it a binary file)."""
    if not data.startswith(UTF16_MARKS):
        return None
    try:
        text = data.decode("utf-16")  # the mark says which byte order, and is not part of the text
    except UnicodeDecodeError:
        return None
    return None if "\0" in text else lines_ended_by_lf(text)


def lenient_text(data: bytes) -> str:
    """The text as a source is read, bytes that do not decode replaced: to sniff a file's format or take
    its header comments (the reader itself says where a file is not text)."""
    if data.startswith(UTF16_MARKS):
        return lines_ended_by_lf(data[: len(data) & ~1].decode("utf-16", errors="replace"))
    return lines_ended_by_lf(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))

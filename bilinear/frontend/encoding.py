"""How a source file's bytes become text, alike wherever a file is read: UTF-8 (a byte order mark, as
some editors write, is not part of the text), or UTF-16 or UTF-32 with its byte order mark (as
PowerShell 5's `>` writes UTF-16); every line ending made LF."""

from __future__ import annotations

# UTF-32's little-endian mark begins as UTF-16's does: it is looked for first
MARKS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def marked_encoding(data: bytes) -> str | None:
    """"UTF-16" or "UTF-32" where ``data`` begins with that encoding's byte order mark, else None."""
    return next((encoding for mark, encoding in MARKS if data.startswith(mark)), None)


def lines_ended_by_lf(text: str) -> str:
    """The text with every line ending, CRLF or a lone CR (classic Mac OS), made LF, as Python's
    universal newlines and editors read them: the parser and the quoted lines count LFs only, and
    converting lone CRs only in a file without any LF left CR lines with one final CRLF one line."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def marked_text(data: bytes) -> str | None:
    """The text of UTF-16 or UTF-32 with its byte order mark, or None where ``data`` is not that: a
    NUL-free decoding of it (its NULs would otherwise have called it a binary file)."""
    encoding = marked_encoding(data)
    if encoding is None:
        return None
    try:
        text = data.decode(encoding)  # the mark says which byte order, and is not part of the text
    except UnicodeDecodeError:
        return None
    return None if "\0" in text else lines_ended_by_lf(text)


def lenient_text(data: bytes) -> str:
    """The text as a source is read, bytes that do not decode replaced: to sniff a file's format or take
    its header comments (the reader itself says where a file is not text)."""
    if encoding := marked_encoding(data):
        width = 4 if encoding == "UTF-32" else 2
        return lines_ended_by_lf(data[: len(data) - len(data) % width].decode(encoding, errors="replace"))
    return lines_ended_by_lf(data.decode("utf-8", errors="replace").removeprefix("\ufeff"))

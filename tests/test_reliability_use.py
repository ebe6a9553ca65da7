"""Issue 12: `use "…"` reads only bounded regular .bl files and never echoes another file."""

from __future__ import annotations

import os
import re
import threading

import pytest

import bilinear
from bilinear.cli import main
from bilinear.diagnostics import BilinearError, render
from bilinear.frontend import loader

SECRET = "root:x:0:0:secret-password-line:/root:/bin/bash"


def _diagnostics(path) -> list[str]:
    with pytest.raises(BilinearError) as caught:
        bilinear.load(path)
    return [render(d) for d in caught.value.diagnostics]


def _user(tmp_path, target: str):
    path = tmp_path / "main.bl"
    path.write_text(f'use "{target}"\n\nalgorithm one <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n', encoding="utf-8")
    return path


def test_use_of_a_file_that_is_not_bl_never_quotes_it(tmp_path):
    secret = tmp_path / "passwd"
    secret.write_text(SECRET + "\n", encoding="utf-8")
    for target in (str(secret), "passwd"):
        text = "\n".join(_diagnostics(_user(tmp_path, target)))
        assert "secret-password-line" not in text and "main.bl:1" in text


def test_use_of_a_bl_link_to_a_foreign_file_never_quotes_it(tmp_path):
    secret = tmp_path / "passwd"
    secret.write_text(SECRET + "\n", encoding="utf-8")
    (tmp_path / "innocent.bl").symlink_to(secret)
    text = "\n".join(_diagnostics(_user(tmp_path, "innocent.bl")))
    assert "secret-password-line" not in text and "not .bl text" in text


def test_a_used_bl_file_with_a_misspelt_first_keyword_is_pointed_at(tmp_path):
    """`algoritm x <1,1,1;1>:` got "typo.bl is not .bl text" at the `use`, where a typo on its second
    line is pointed at; a foreign file that only starts with a near keyword is still never quoted."""
    (tmp_path / "typo.bl").write_text("algoritm typo <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n", encoding="utf-8")
    text = "\n".join(_diagnostics(_user(tmp_path, "typo.bl")))
    assert text.startswith(f"{tmp_path / 'typo.bl'}:1:1: error: unexpected 'algoritm'; expected 'algorithm'")
    for line in ("user secret-password-line", "Table 3 for the secret-password-line",
                 "stable secret-password-line <1,2,3>", "tabel secret-password-line for tomorrow"):
        (tmp_path / "foreign.bl").write_text(line + "\n", encoding="utf-8")
        text = "\n".join(_diagnostics(_user(tmp_path, "foreign.bl")))
        assert "secret-password-line" not in text and "not .bl text" in text, line


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/null", "/proc/self/environ"])
def test_use_of_devices_and_proc_files_is_refused(tmp_path, device):
    if not os.path.exists(device):
        pytest.skip(f"{device} is not on this system")
    main, link = tmp_path / "main.bl", tmp_path / "dev.bl"
    link.symlink_to(device)
    # each file checked as soon as it is written (the two `use`s had been written into one main.bl first)
    assert _diagnostics(_user(tmp_path, device))[0].startswith(f"{main}:1:1: error: `use` takes .bl files, not '{device}'")
    # /proc/self/environ is located at its first NUL, the length of the environment's first variable
    refused = (rf"{re.escape(str(link))}:1:\d+: error: {re.escape(str(link))} is a binary file, not \.bl text"
               if device.startswith("/proc") else
               re.escape(f"error: {link} is not a regular file (a device, FIFO or socket); it is not read"))
    used = _diagnostics(_user(tmp_path, "dev.bl"))[0]
    assert re.match(refused if device.startswith("/proc") else re.escape(f"{main}:1:1: ") + refused, used), used
    assert re.match(refused, _diagnostics(link)[0])


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.bl"
    os.mkfifo(fifo)
    result = []
    worker = threading.Thread(target=lambda: result.append(_diagnostics(_user(tmp_path, "pipe.bl"))), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader so the test process can end
        with open(fifo, "w"):
            pass
        pytest.fail("reading a FIFO blocked")
    assert "not a regular file" in "\n".join(result[0])


def test_oversized_files_are_refused_before_reading(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "MAX_SOURCE_BYTES", 1000)
    big = tmp_path / "big.bl"
    big.write_text("# " + "x" * 2000 + "\n", encoding="utf-8")
    assert "limited to" in "\n".join(_diagnostics(big))
    assert "limited to" in "\n".join(_diagnostics(_user(tmp_path, "big.bl")))


def test_symlink_loop_in_use_is_one_message(tmp_path):
    """It had checked only that "loop.bl" was in the rendered text, which quotes the `use` line itself."""
    loop = tmp_path / "loop.bl"
    os.symlink(loop, loop)
    with pytest.raises(BilinearError) as caught:
        bilinear.load(_user(tmp_path, "loop.bl"))
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.message == f"cannot read {loop}: Too many levels of symbolic links"
    assert (diagnostic.span.path, diagnostic.span.line) == (str(tmp_path / "main.bl"), 1)


def test_a_shipped_definition_named_that_is_not_its_files_last_is_the_one_used(capsys, tmp_path):
    """`bilinear run strassen_x_strassen` ran msmes2, the last definition of the file defining it, an
    in-place schedule (its A and B overwritten and restored), without a word; the README says a
    name picks the definition of that name."""
    program = bilinear.load("strassen_x_strassen")
    assert program.main.name == "strassen_x_strassen" and program.unused() == ()
    assert bilinear.load("msmes2").main.name == "msmes2"
    assert main(["run", "strassen_x_strassen", "-n", "16", "--backend", "numpy", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    assert "strassen_x_strassen" in out and "msmes2" not in out and "restored" not in out, out


def test_a_path_derived_from_a_shipped_definitions_path_loads_as_its_file():
    """Path operations keep the subclass (p.resolve() is a ShippedDefinition too) but not the name it was
    found by: loading one must read the file, not fail on the missing name."""
    found = loader.find_scheme("strassen_x_strassen")
    assert bilinear.load(found).main.name == "strassen_x_strassen"
    assert bilinear.load(found.resolve()).main.name == "msmes2"


def test_use_takes_a_bl_suffix_in_any_case_as_verify_does(tmp_path):
    """`bilinear verify ONE.BL` read it, and `use "ONE.BL"` refused it: "`use` takes .bl files" (an audit)."""
    (tmp_path / "ONE.BL").write_text("algorithm two <1,1,1;1>:\n  M1 = A11 * B11\n  C11 = M1\n", encoding="utf-8")
    program = bilinear.load(_user(tmp_path, "ONE.BL"))
    assert [a.name for a in program.algorithms] == ["two", "one"]

"""Every global name a function of the package uses is defined in its module.

Code that only runs on a GPU is not executed by CI, so a name lost in a refactor there
(as ``tsm2.Call`` once was) would otherwise surface first on the device.
"""

from __future__ import annotations

import builtins
import dis
import importlib
import pkgutil
import types

import pytest

import bilinear

MODULES = sorted(m.name for m in pkgutil.walk_packages(bilinear.__path__, "bilinear."))


def _code_objects(code: types.CodeType):
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _code_objects(constant)


def _functions(module: types.ModuleType):
    for value in vars(module).values():
        members = vars(value).values() if isinstance(value, type) else (value,)
        for member in members:
            member = getattr(member, "__func__", member)
            if isinstance(member, property):
                member = member.fget
            code = getattr(member, "__code__", None)
            # co_filename: generated methods (dataclasses') belong to no file of ours
            if code is not None and code.co_filename == getattr(module, "__file__", "<string>"):
                yield from _code_objects(code)


def undefined_globals(module: types.ModuleType) -> set[str]:
    names = set()
    for code in _functions(module):
        names |= {i.argval for i in dis.get_instructions(code) if i.opname == "LOAD_GLOBAL"}
    return {n for n in names if n not in vars(module) and not hasattr(builtins, n)}


@pytest.mark.parametrize("name", MODULES)
def test_functions_use_only_defined_globals(name):
    module = importlib.import_module(name)
    assert undefined_globals(module) == set()


def test_the_check_sees_a_missing_name():
    module = types.ModuleType("probe")
    exec(compile("def f():\n    return Missing(1)\n", "<string>", "exec"), module.__dict__)
    assert undefined_globals(module) == {"Missing"}

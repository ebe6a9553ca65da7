"""Array stand-ins for the tests of what the API accepts."""

from __future__ import annotations


class DLPackOnly:
    """An array seen only through the DLPack protocol (no NumPy or CuPy type, no ``shape``)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

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


class DLPackAltered(DLPackOnly):
    """A NumPy array exported as a legacy DLPack capsule with its device type or dtype code changed:
    what a CUDA tensor (device type 2) or a host bfloat16 tensor (dtype code 4) exports, without torch."""

    def __init__(self, array, device_type: int = 1, dtype_code: int | None = None):
        super().__init__(array)
        self.device_type, self.dtype_code = device_type, dtype_code

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, **kwargs):
        import ctypes

        capsule = self.array.__dlpack__()  # the unversioned DLManagedTensor: its DLTensor first
        pointer = ctypes.pythonapi.PyCapsule_GetPointer
        pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        tensor = pointer(capsule, b"dltensor")
        ctypes.c_int32.from_address(tensor + 8).value = self.device_type  # DLTensor.device.device_type
        if self.dtype_code is not None:
            ctypes.c_uint8.from_address(tensor + 20).value = self.dtype_code  # DLTensor.dtype.code
        return capsule

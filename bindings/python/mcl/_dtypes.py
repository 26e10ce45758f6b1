"""Element types: mcl's names, and the NumPy dtype that holds each (for
outputs mcl allocates)."""

# mcl's name of an element type -> NumPy's, for the types NumPy has.
_NUMPY_NAMES = {
    "bool": "bool", "int8": "int8", "uint8": "uint8", "int16": "int16",
    "uint16": "uint16", "int32": "int32", "uint32": "uint32",
    "int64": "int64", "uint64": "uint64", "float16": "float16",
    "float32": "float32", "float64": "float64", "complex64": "complex64",
    "complex128": "complex128",
}
# Types NumPy lacks; ml_dtypes (used by JAX) provides them when installed.
_ML_DTYPES_NAMES = {"bfloat16": "bfloat16", "float8_e4m3": "float8_e4m3fn",
                    "float8_e5m2": "float8_e5m2"}

def numpy_dtype(name):
    """The NumPy dtype for mcl's type `name`, or None when NumPy (with
    ml_dtypes, if installed) has none."""
    import numpy
    if name in _NUMPY_NAMES:
        return numpy.dtype(_NUMPY_NAMES[name])
    if name in _ML_DTYPES_NAMES:
        try:
            import ml_dtypes
        except ImportError:
            return None
        return numpy.dtype(getattr(ml_dtypes, _ML_DTYPES_NAMES[name]))
    return None



def dtype_name(dtype):
    """mcl's name for a dtype= argument: a name as it is, else whatever
    numpy.dtype makes of it (numpy.float16, ml_dtypes.bfloat16, ...)."""
    if dtype is None or isinstance(dtype, str):
        return dtype
    import numpy
    try:
        name = numpy.dtype(dtype).name
    except TypeError:
        from . import _mcl
        raise _mcl.invalid_argument(
            f"dtype: {dtype!r} is not a type name such as 'bfloat16'") \
            from None
    return {"float8_e4m3fn": "float8_e4m3"}.get(name, name)

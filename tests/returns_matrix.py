"""The returns matrix every framework's return tests share (tests/test_producers.py, tests/paddle_cases.py):
a 2x3 tensor of each dtype in each layout, made by `producers.ret_<framework>(dtype, layout)`
(tests/test_producers.cpp), and the values it must hold."""

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
          "bfloat16", "float32", "float64", "complex64", "complex128"]
LAYOUTS = ["C", "F", "neg", "zero"]


def expected_2x3(dtype, layout):
    def value(k):
        if dtype == "bool":
            return k % 2 == 1
        if dtype.startswith("complex"):
            return complex(k, -k)
        return float(k)
    rows = [[value(3 * i + j) for j in range(3)] for i in range(2)]
    return [rows[0], rows[0]] if layout == "zero" else rows

"""Calls the stubs must refuse: mypy must report an error on each line whose comment starts
with "error:", and on no other (test_typing.py), so that the typing check can fail."""

import numpy as np

import dmlbits
import dmlbits.dask
import dmlbits.testing

a = np.array([12, 10], np.uint32)
dmlbits.bitwise_and(a)  # error: a binary operator given one operand
dmlbits.bitwise_not(a, a, a)  # error: one operand and out=, no third
dmlbits.bitwise_and(x1=a, x2=a)  # error: operands are positional only
dmlbits.bitwise_or(a, a, backend="gpu")  # error: not a backend's name
dmlbits.left_shift(a, a, shift_overflow="saturate")  # error: not a shift_overflow rule
dmlbits.bitwise_and(a, a, shift_overflow="zero")  # error: only shifts take shift_overflow
dmlbits.bitwise_count(a, out_dtype="uint16")  # error: popcount's result is uint8 or uint32
dmlbits.bitwise_xor(a, a, threads="4")  # error: threads is a number
result, timing = dmlbits.bitwise_xor(a, a, timing=True)
timing.upper()  # error: timing is a dict
dmlbits.evaluate(1)  # error: an expression is a string
dmlbits.read_tensor(3)  # error: a path
dmlbits.testing.assert_bits_equal(a)  # error: two arrays
dmlbits.dask.bitwise_and(a, a, out=a)  # error: the Dask wrappers have no out=
dmlbits.no_such_function(a)  # error: not in the module

"""The references the rank checks rely on, checked against hand-worked
values: a wrong reference would fail good code or pass bad code."""

import numpy as np

from reference import (MOVABLE, REDUCIBLE, bfloat16_bits, bfloat16_values,
                       expected_reduction, ops_for, payload, reduction_input)

TYPES = {t.name: t for t in MOVABLE}


def test_bfloat16_round_trip_and_rounding():
    exact = np.array([1.0, -2.5, 81.0, 0.0], np.float32)
    assert (bfloat16_values(bfloat16_bits(exact)) == exact).all()
    assert bfloat16_bits(np.float32(1.0)) == 0x3F80
    # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties go to even (1.0).
    assert bfloat16_bits(np.float32(1 + 2 ** -8)) == 0x3F80
    assert bfloat16_bits(np.float32(1 + 3 * 2 ** -8)) == 0x3F82


def test_integer_avg_truncates_toward_zero():
    t = TYPES["int32"]
    inputs = [np.array([-7, 7, -1, 5], np.int32), np.array([0, 0, 0, 0],
                                                           np.int32)]
    assert expected_reduction(t, "avg", inputs).tolist() == [-3, 3, 0, 2]


def test_float_avg_divides_once_in_float32():
    inputs = [np.array([1.0], np.float16)] * 2 + [np.array([0.5],
                                                           np.float16)]
    got = expected_reduction(TYPES["float16"], "avg", inputs)
    assert got.dtype == np.float16
    assert got[0] == np.float16(np.float32(2.5) / np.float32(3))


def test_complex_reduces_parts_apart():
    t = TYPES["complex64"]
    inputs = [np.array([1 + 2j], np.complex64), np.array([2 - 1j],
                                                         np.complex64)]
    assert expected_reduction(t, "sum", inputs)[0] == 3 + 1j
    assert expected_reduction(t, "avg", inputs)[0] == 1.5 + 0.5j


def test_inputs_stay_exact_and_in_range():
    for t in REDUCIBLE:
        for op in ops_for(t):
            inputs = [reduction_input(t, op, r, 30) for r in range(4)]
            want = expected_reduction(t, op, inputs)
            assert want.dtype == t.storage and want.shape == (30,)
            if t.kind in ("int", "uint") and op != "avg":
                # No wrap-around: the exact int64 result fits the type.
                exact = np.stack(inputs).astype(np.int64)
                folded = {"sum": exact.sum(0), "prod": exact.prod(0),
                          "max": exact.max(0), "min": exact.min(0)}[op]
                assert (want.astype(np.int64) == folded).all(), (t, op)
            # Ranks differ, or the test could not tell them apart.
            assert not np.array_equal(inputs[0], inputs[1]), (t, op)


def test_payloads_differ_by_rank_and_salt():
    for t in MOVABLE:
        a, b, c = (payload(t, 0, (4, 3)), payload(t, 1, (4, 3)),
                   payload(t, 0, (4, 3), salt=1))
        assert a.dtype == t.storage and a.shape == (4, 3)
        assert a.tobytes() != b.tobytes() and a.tobytes() != c.tobytes()

"""Host integer helpers (``kimiops.intmath``) give Triton's values."""

import triton

from kimiops.intmath import cdiv, next_power_of_2


def test_cdiv_and_next_power_of_2_match_triton():
    for a in range(0, 300):
        assert next_power_of_2(a) == triton.next_power_of_2(a), a
        for b in (1, 2, 3, 16, 32, 64, 132):
            assert cdiv(a, b) == triton.cdiv(a, b), (a, b)
    for a in (2**31 - 1, 2**31, 2**40 + 3):
        assert next_power_of_2(a) == triton.next_power_of_2(a)
        assert cdiv(a, 7) == triton.cdiv(a, 7)

"""Real and Integer: encodings, priors and bounds."""

from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from treebo.space import Integer, Real, Space

# -- encodings -----------------------------------------------------------------------------


def test_integer_values_get_equal_shares_of_the_unit_interval():
    dim = Integer(0, 3)
    u = np.linspace(0, 1, 40_001)[:-1]
    counts = np.bincount(dim.decode(u[:, None]), minlength=4)
    assert np.all(np.abs(counts / len(u) - 0.25) < 1e-3)
    np.testing.assert_allclose(dim.encode([0, 1, 2, 3]).ravel(), [0.125, 0.375, 0.625, 0.875])


def test_log_uniform_real_spreads_over_orders_of_magnitude():
    dim = Real(1e-4, 1.0, prior="log-uniform")
    assert Real(1e-4, 1.0, log=True) == dim
    np.testing.assert_allclose(dim.encode([1e-4, 1e-2, 1.0]).ravel(), [0.0, 0.5, 1.0])


# -- bounds --------------------------------------------------------------------------------


@pytest.mark.fault
@pytest.mark.parametrize(
    "make, message",
    [
        (
            lambda: Real(1, 2, log="yes", name="lr"),
            "dimension 'lr': log must be True or False, got 'yes'",
        ),
        (
            lambda: Integer(1, 8, log=1, name="depth"),
            "dimension 'depth': log must be True or False",
        ),
        (
            lambda: Real(-1e308, 1e308, name="lr"),
            "dimension 'lr': high - low overflows float64; low "
            r"and high must be less than 1.798e\+308 apart",
        ),
        (
            lambda: Real(0, 5e-324, name="lr"),
            r"dimension 'lr': \[low, high\] = \[0.0, 5e-324\] "
            "holds only 2 float64 values; a Real needs at least "
            r"2\*\*20 = 1048576",
        ),
        (
            lambda: Real(1, 1 + 2.3e-16, name="lr"),
            r"dimension 'lr': \[low, high\] = "
            r"\[1.0, 1.0000000000000002\] holds only 2",
        ),
        (
            lambda: Real(1, 1 + 1e-12, name="lr"),
            "dimension 'lr': .* holds only 4505 float64 values",
        ),
        (
            lambda: Real(1e300, 1e300 * (1 + 1e-9), log=True, name="lr"),
            r"dimension 'lr': \[log\(low\), log\(high\)\] = .* holds only 8797 float64 values",
        ),
        (
            lambda: Real(0, 10**400, name="lr"),
            "dimension 'lr': high must be finite and within the "
            r"float64 range \(magnitude at most 1.798e\+308\), "
            r"got 1000000000.*\.\.\.$",
        ),
        (lambda: Real(Fraction(-(10**400), 3), 0, name="lr"), "dimension 'lr': low must be finite"),
        (
            lambda: Integer(0, 10**30, name="depth"),
            "dimension 'depth': high must lie within "
            r"\+-2\*\*49 = \+-562949953421312",
        ),
        (lambda: Integer(-(2**49) - 1, 0, name="depth"), "dimension 'depth': low must lie within"),
        (lambda: Integer(0, 2.0**53, name="depth"), "dimension 'depth': high must lie within"),
        (
            lambda: Integer(1, 2**40 + 1, log=True, name="depth"),
            r"dimension 'depth': a log-uniform prior needs high <= 2\*\*40 = 1099511627776",
        ),
        (
            lambda: Integer(0, Decimal("5.5"), name="depth"),
            "dimension 'depth': high must be an "
            r"integer, got Decimal\('5.5'\)",
        ),
    ],
    ids=[
        "log-str",
        "log-int",
        "span-overflow",
        "subnormal-span",
        "2-floats",
        "4505-floats",
        "log-scale-degenerate",
        "real-beyond-float64",
        "fraction-beyond-float64",
        "integer-10**30",
        "integer-below-limit",
        "integer-float-2**53",
        "log-integer-2**40+1",
        "integer-decimal-5.5",
    ],
)
def test_bad_bounds_are_refused_naming_the_argument(make, message):
    with pytest.raises(ValueError, match=message):
        make()


@pytest.mark.fault
@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: Real(Decimal(0), 1), Real(0.0, 1.0)),
        (lambda: Real(Fraction(0), 1), Real(0.0, 1.0)),
        (lambda: Real(np.array(0.0), 1), Real(0.0, 1.0)),
        (
            lambda: Real(Fraction(1, 4), Decimal("0.5"), log=np.bool_(True)),
            Real(0.25, 0.5, log=True),
        ),
        (lambda: Integer(Decimal(0), Fraction(10, 2)), Integer(0, 5)),
        (lambda: Integer(np.array(3), np.uint64(7)), Integer(3, 7)),
        (lambda: Space([(Decimal(0), Fraction(1, 2))]).dimensions[0], Real(0.0, 0.5, name="x0")),
    ],
    ids=[
        "decimal",
        "fraction",
        "0d-array",
        "fraction-decimal-np.bool_-log",
        "integer-decimal",
        "integer-0d-uint64",
        "shorthand",
    ],
)
def test_bounds_of_any_real_number_type_are_accepted(make, expected):
    dim = make()
    assert dim == expected
    assert type(dim.low) is type(expected.low) and type(dim.high) is type(expected.high)


@pytest.mark.fault
def test_integer_bounds_are_exact_up_to_the_limit_and_refused_beyond():
    for dim in (
        Integer(-(2**49), 2**49),
        Integer(2**49 - 10**4, 2**49),
        Integer(2**40 - 10**4, 2**40, log=True),
    ):
        values = [*range(dim.low, dim.low + 1000), *range(dim.high - 1000, dim.high + 1)]
        assert dim.decode(dim.encode(values)) == values
    with pytest.raises(ValueError, match="dimension 'depth': high must lie within"):
        Integer(0, 2**49 + 1, name="depth")

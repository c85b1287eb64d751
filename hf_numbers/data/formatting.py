"""Numbers written as plain decimal literals (never exponent notation, never ``-0``), as the tasks write them.

Example:
    >>> format_decimal(-1234, -5), format_fixed(1.5, 2)
    ('-0.01234', '1.50')
"""

from __future__ import annotations


def format_fixed(value: float, decimals: int) -> str:
    """Write ``value`` with exactly ``decimals`` decimals, never as ``-0``.

    Example:
        >>> format_fixed(-0.0001, 3), format_fixed(1.5, 2)
        ('0.000', '1.50')
    """
    text = f"{value:.{decimals}f}"
    if float(text) == 0.0:
        text = text.lstrip("-")
    return text


def round_fixed(value: float, decimals: int) -> float:
    """The float64 value of ``format_fixed(value, decimals)``.

    Example:
        >>> round_fixed(1.23456, 3)
        1.235
    """
    return float(format_fixed(value, decimals))


def format_scaled_integer(mantissa: int, decimals: int) -> str:
    """Write the exact decimal ``mantissa / 10**decimals`` (``decimals`` >= 0).

    Example:
        >>> format_scaled_integer(-12345, 2), format_scaled_integer(5, 3), format_scaled_integer(7, 0)
        ('-123.45', '0.005', '7')
    """
    sign = "-" if mantissa < 0 else ""
    digits = str(abs(mantissa))
    if decimals == 0:
        return sign + digits
    digits = digits.rjust(decimals + 1, "0")
    return f"{sign}{digits[:-decimals]}.{digits[-decimals:]}"


def format_decimal(mantissa: int, exponent: int) -> str:
    """Write the exact decimal ``mantissa * 10**exponent`` as a plain literal (no exponent notation).

    Example:
        >>> format_decimal(-1234, -5), format_decimal(1234, 2), format_decimal(7, 0)
        ('-0.01234', '123400', '7')
    """
    return str(mantissa * 10**exponent) if exponent >= 0 else format_scaled_integer(mantissa, -exponent)

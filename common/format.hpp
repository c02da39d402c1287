#pragma once
// Numbers as text: the one place each printed form of a number is defined. Every command, report
// and file writer picks one of these by what the number is for, instead of a local snprintf.
#include <cstddef>
#include <string>
#include <string_view>

namespace tiersim::format {

// `digits` significant digits, printf's %g: "0.001235", "1235", "1.235e+07".
std::string significant(double v, int digits);

// `decimals` digits after the point, printf's %f: "12.50".
std::string fixed(double v, int decimals);

// The shortest text that reads back as exactly `v` (std::to_chars): what files tiersim writes and
// reads again (resolved YAML, device profiles) use, so a value survives the round trip.
std::string exact(double v);

// For a table a person scans: four significant digits, whole numbers from 1,000 up to 1e7, and
// three significant digits in exponent form beyond that or below 1e-3 ("0.0001 -> 1e-04").
std::string table(double v);

// For a report cell: "n/a" and "inf" for non-finite values, %.3e below 1e-3 or from 1e7 up,
// otherwise four significant digits.
std::string report(double v);

// US dollars as a buyer reads them: "$12.34", "$78.8k", "$1.25M".
std::string dollars(double usd);

// `v` rounded to `decimals` digits after the point, with a comma between thousands: "1,234,567.9".
std::string grouped(double v, int decimals);

// Decimal gigabytes (1e9 bytes) with one decimal and the unit: "36.3 GB".
std::string gigabytes(double bytes);

// The forms for people reading a command's text (run, compare): never for files read back, nor
// for --json, which keeps numbers as numbers.
//
// A count or measure: whole numbers with thousands separators from 1,000 up to 1e15
// ("78,816"; fractions rounded), four significant digits below ("12.35", "0.001235"), exponent
// form beyond (from 1e15, below 1e-4): "1.23e+15".
std::string number(double v);
// US dollars: whole dollars with separators from $1,000 ("$78,816"), cents from $1 ("$12.34"),
// three significant digits below ("$0.000123"); "-$5.00" for negatives.
std::string usd(double usd);
// Bytes in decimal (SI) units, one decimal below 100 of the unit, none from 100: "512 B",
// "1.2 TB", "36.3 GB", "150 MB".
std::string bytes(double bytes);
// A duration: seconds from 1 s ("301 s", "4.52 s", "12,345 s"), milliseconds and microseconds
// below ("12.5 ms", "830 us"), four significant digits: "0 s" for zero.
std::string duration(double s);
// A value in a table whose unit column names its unit (the report's comparison table): money and
// bytes in their own forms ("$78,816" for "USD" and "USD/..." units, "1.2 TB"), every other
// value as number() without the unit text ("203,302" in a column of seconds).
std::string cell(double v, std::string_view unit);
// A value with its unit (a metric's declared unit) as people read it: cell() for money and bytes
// with the rest of the unit after the dollars ("$1.92/h"), duration() for seconds, else cell() and
// the unit. Dollars for "USD" and
// "USD/..." units ("$78,816", "$1.92/h" for "USD/h"), bytes(), duration() for "s", else
// number() and the unit ("1,234 tokens/s", "12.5 GB/s"; no unit for dimensionless ones).
std::string quantity(double v, std::string_view unit);

// A count and its noun, plural unless the count is one: "1 configuration", "3 configurations"
// (the noun's plural is the noun and an 's').
std::string counted(std::size_t n, std::string_view noun);

}  // namespace tiersim::format

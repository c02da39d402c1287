#pragma once
// Numbers as text: the one place each printed form of a number is defined. Every command, report
// and file writer picks one of these by what the number is for, instead of a local snprintf.
#include <string>

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

// US dollars in full for a page or a table a person reads: "$78,816" (whole dollars with
// thousands separators from $1,000 up), "$12.34", "$0.00421" (three significant digits below $1).
std::string usd(double usd);

// Bytes in decimal units (1 kB = 1000 B, as drive and memory makers quote capacities), at most
// one decimal: "1.2 TB", "36.3 GB", "512 GB", "900 B".
std::string bytes(double bytes);

// `v` rounded to `decimals` digits after the point, with a comma between thousands: "1,234,567.9".
std::string grouped(double v, int decimals);

// Decimal gigabytes (1e9 bytes) with one decimal and the unit: "36.3 GB".
std::string gigabytes(double bytes);

}  // namespace tiersim::format

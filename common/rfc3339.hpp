#pragma once
// RFC 3339 timestamps, the one parser and the one formatter of the tree: Kubernetes objects, kubeconfig exec
// credentials, the plan's and the CLI's start instants, journals, reports and the simulator's API answers
// all read and write them here ("2026-11-30T10:00:05Z", fractions and offsets accepted).
#include <chrono>
#include <string>
#include <string_view>

#include "common/expected.hpp"

namespace bootstorm {

// YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm) ('t' or a space may stand for 'T', 'z' for 'Z'). An error says
// what is wrong and how to write it: a field out of range, a day the month does not have, no time zone, a
// time outside what system_clock can hold (years 1678 to 2261).
Expected<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view text);

// How many fractional digits format_rfc3339 writes. Digits are truncated, never rounded: a formatted time is
// never later than the instant it stands for (the order of journal lines stays the order of events).
enum class Rfc3339Fraction { seconds, millis, micros };

// UTC with a 'Z': "2026-11-30T10:00:05.123Z" (millis), "2026-11-30T10:00:05Z" (seconds, as metav1.Time
// serialises) or "2026-11-30T10:00:05.123456Z" (micros, metav1.MicroTime).
std::string format_rfc3339(std::chrono::system_clock::time_point t,
                           Rfc3339Fraction fraction = Rfc3339Fraction::millis);

// For times held as floating Unix seconds (the lab model, summary.json, journals): the fraction is rounded to
// the nearest nanosecond.
std::chrono::system_clock::time_point from_unix_seconds(double unix_seconds);
// The other way: seconds since the Unix epoch, with the fraction.
double unix_seconds(std::chrono::system_clock::time_point t);

}  // namespace bootstorm

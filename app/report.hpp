#pragma once
// Check reports rendered in one place, from the fields of CheckResult: JSON (every check, and back again for
// `merge`) and text (a summary a person reads in one screen, every failure in full, each passing line with
// --verbose).
#include <tapegrad/autodiff/check.hpp>

#include <nlohmann/json.hpp>

#include <ostream>

namespace tapegrad::app {

/// One check as JSON: every field of CheckResult.
nlohmann::json check_json(const CheckResult& c);
/// The inverse of check_json (a merge reads partial reports with it); UsageError naming `where` when a field
/// is missing or of the wrong type.
CheckResult check_from_json(const nlohmann::json& j, const std::string& where);

/// The whole report: {"verdict", "checks", "warnings"}, plus "shard" for a partial one (shard.count > 1).
nlohmann::json report_json(const CheckReport& report, const Shard& shard = {});

/// The text report: per graph, engine precision and kind of check, how many ran and the worst relative error
/// against its threshold; every failing check in full; every check's line with `verbose`; the warnings; the
/// verdict line.
void print_report(std::ostream& out, const CheckReport& report, bool verbose);

} // namespace tapegrad::app

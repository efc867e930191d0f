// Check results as data: kinds, their ids and names; precision names.
#include "graphs.hpp"

using namespace tapegrad;
using namespace tapegrad::test;

TEST_CASE("precision names are the ones --precision takes") {
  CHECK(precision_name<float>() == "float");
  CHECK(precision_name<double>() == "double");
  CHECK(precision_name<long double>() == "long-double");
  CHECK(precision_name<float128>() == "float128");
  CHECK(precision_name<float50>() == "50");
  CHECK(precision_name<float100>() == "100");
  MpfrDigits digits(200);
  CHECK(precision_name<mpfr_real>() == "200");
}

TEST_CASE("every CheckKind has an id and a name, and check_kinds lists each once") {
  std::size_t n = 0;
  for (int k = 0; std::string(kind_id(static_cast<CheckKind>(k))) != "?"; ++k, ++n) {
    const auto kind = static_cast<CheckKind>(k);
    CHECK(std::count(std::begin(check_kinds), std::end(check_kinds), kind) == 1);
    CHECK(kind_name(kind, "other") != "?");
  }
  CHECK(n == std::size(check_kinds));
}

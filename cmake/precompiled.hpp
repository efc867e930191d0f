// The third-party headers every tapegrad file includes, precompiled once per build (CMakeLists.txt,
// TAPEGRAD_PCH) and reused by every target of ours: the compilations of a clean build summed 1839 s without
// it and 1713 s with it. Our own headers stay out; the order is real.hpp's. Since this header comes first in
// every file, a missing include would go unnoticed here: the sanitizer build (scripts/test --sanitize) builds
// without it and catches that.
#include <boost/math/special_functions/fpclassify.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <boost/multiprecision/cpp_int.hpp>
#include <boost/multiprecision/eigen.hpp>
#include <boost/multiprecision/float128.hpp>
#include <boost/multiprecision/mpfr.hpp>

#include <Eigen/Core>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

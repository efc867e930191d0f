// The third-party headers every tapegrad file includes, precompiled once per build (CMakeLists.txt,
// TAPEGRAD_PCH) and reused by every target of ours: parsing them took about 8 s in each of the build's
// 39 files. Our own headers stay out, so each file still includes what it uses; the order is real.hpp's.
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

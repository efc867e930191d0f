// The scalar types tapegrad's program is compiled for: ONE table, read by the C++ code (autodiff/real.hpp
// includes it with TAPEGRAD_SCALAR defined, for precision names, report names and the CLI's dispatch in
// app/precision.hpp; autodiff/instances.hpp, for the per-type code our own builds compile once per type) and
// by CMake (tapegrad_per_scalar_type in CMakeLists.txt reads these lines: one generated file per type for the
// program's engine and for those instances). Each line: the C++ type, the `--precision` spelling, the name
// reports and messages use. The last type (MPFR) has no spelling of its own: any other number of digits
// selects it, and its names carry the digits. No include guard: it is included once per use, with
// TAPEGRAD_SCALAR defined differently. A row starts at the line's first column and its type holds no comma
// (the macro and CMake split at the first one: give such a type an alias, as float50 is); no two rows name
// the same type (each row's instances are defined once).
TAPEGRAD_SCALAR(tapegrad::float16, "float16", "float16")
TAPEGRAD_SCALAR(tapegrad::bfloat16, "bfloat16", "bfloat16")
TAPEGRAD_SCALAR(float, "float", "float")
TAPEGRAD_SCALAR(double, "double", "double")
TAPEGRAD_SCALAR(long double, "long-double", "long double")
TAPEGRAD_SCALAR(tapegrad::float128, "float128", "float128")
TAPEGRAD_SCALAR(tapegrad::float50, "50", "cpp_bin_float<50>")
TAPEGRAD_SCALAR(tapegrad::float100, "100", "cpp_bin_float<100>")
TAPEGRAD_SCALAR(tapegrad::mpfr_real, "", "mpfr")

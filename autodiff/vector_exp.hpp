#pragma once
// exp over a contiguous array, in place: for double, glibc's vector exp (libmvec) with the widest registers the
// CPU has, chosen at run time; for every other type, exp one entry at a time.
//
// Why: the softmax of attention at T = 512 computes 262,144 exps; the scalar glibc exp took about 1.37 ms for
// them on the development machine, the AVX-512 variant 0.22 ms (bench/ measures the whole graph). The price is
// accuracy: libmvec's exp is within 4 ulp (measured worst 2.9 ulp over 262,144 arguments in [-40, 0], against
// 0.5 for the scalar exp; tests/autodiff/vector_exp.cpp asserts <= 4 ulp against MPFR), far inside the
// engine's tolerance of 1024 eps. Special values (-inf -> 0, +inf, NaN, overflow, subnormal results) come
// out as std::exp gives them. Each entry's result depends only on its argument, not on its position or the
// array's length (a tail shorter than a register is padded with zeros, not handed to the scalar exp).
//
// The vector code needs x86-64, glibc's libmvec and a build that defines TAPEGRAD_HAVE_LIBMVEC (CMake does,
// and links libmvec, when it finds it); otherwise, and on CPUs without AVX2, the scalar exp is used.

#include "real.hpp"

#include <cmath>
#include <cstddef>

#if defined(TAPEGRAD_HAVE_LIBMVEC) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TAPEGRAD_VECTOR_EXP 1
// glibc libmvec's exp, 8 doubles (AVX-512) and 4 doubles (AVX2); declared with the target of their registers.
extern "C" __attribute__((target("avx512f"))) __m512d _ZGVeN8v_exp(__m512d);
extern "C" __attribute__((target("avx2"))) __m256d _ZGVdN4v_exp(__m256d);
#endif

namespace tapegrad {

namespace detail {

#ifdef TAPEGRAD_VECTOR_EXP
enum class ExpKernel { scalar, avx2, avx512 };

inline ExpKernel exp_kernel() {
  static const ExpKernel kernel = __builtin_cpu_supports("avx512f") ? ExpKernel::avx512
                                  : __builtin_cpu_supports("avx2")  ? ExpKernel::avx2
                                                                    : ExpKernel::scalar;
  return kernel;
}

// Each: whole registers, then the tail padded with zeros (exp(0) = 1, discarded) so that it goes through the
// same kernel as every other entry.
__attribute__((target("avx512f"))) inline void exp_avx512(double* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm512_storeu_pd(x + i, _ZGVeN8v_exp(_mm512_loadu_pd(x + i)));
  if (i == n) return;
  const __mmask8 tail = static_cast<__mmask8>((1u << (n - i)) - 1);
  _mm512_mask_storeu_pd(x + i, tail, _ZGVeN8v_exp(_mm512_maskz_loadu_pd(tail, x + i)));
}

__attribute__((target("avx2"))) inline void exp_avx2(double* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    _mm256_storeu_pd(x + i, _ZGVdN4v_exp(_mm256_loadu_pd(x + i)));
  if (i == n) return;
  double tail[4] = {0, 0, 0, 0};
  for (std::size_t j = i; j < n; ++j)
    tail[j - i] = x[j];
  _mm256_storeu_pd(tail, _ZGVdN4v_exp(_mm256_loadu_pd(tail)));
  for (std::size_t j = i; j < n; ++j)
    x[j] = tail[j - i];
}
#endif

} // namespace detail

/// Which exp exp_in_place<double> uses on this machine: "libmvec AVX-512", "libmvec AVX2" or "scalar".
inline const char* double_exp_kernel() {
#ifdef TAPEGRAD_VECTOR_EXP
  switch (detail::exp_kernel()) {
  case detail::ExpKernel::avx512:
    return "libmvec AVX-512";
  case detail::ExpKernel::avx2:
    return "libmvec AVX2";
  case detail::ExpKernel::scalar:
    break;
  }
#endif
  return "scalar";
}

/// x[i] = exp(x[i]) for i < n.
template <Real T> void exp_in_place(T* x, std::size_t n) {
#ifdef TAPEGRAD_VECTOR_EXP
  if constexpr (std::is_same_v<T, double>) {
    switch (detail::exp_kernel()) {
    case detail::ExpKernel::avx512:
      return detail::exp_avx512(x, n);
    case detail::ExpKernel::avx2:
      return detail::exp_avx2(x, n);
    case detail::ExpKernel::scalar:
      break;
    }
  }
#endif
  using std::exp;
  for (std::size_t i = 0; i < n; ++i)
    x[i] = exp(x[i]);
}

} // namespace tapegrad

#pragma once
// exp, log, tanh and erfc over a contiguous array, in place: for double, glibc's vector functions (libmvec) with
// the widest registers the CPU has, chosen at run time; for every other type, the scalar function entry by entry.
// And softmax_row: one row of softmax in AVX-512 registers with the same exp (the softmax op's common rows).
//
// Why: the softmax of attention at T = 512 computes 262,144 exps; the elementwise ops exp, log, tanh and gelu (an
// erfc) and the softmax use these; bench/elementwise.cpp measures each against the scalar loop (README quotes
// the numbers), and bench/transformer_block.cpp the whole block.
//
// The price is accuracy: libmvec documents at most 4 ulp for these functions; tests/autodiff/vector_math.cpp
// asserts <= 4 ulp against MPFR for each kernel and prints the worst it measured. That is far inside the
// engine's tolerance of 1024 eps. Special values (infinities, NaN, overflow, subnormal results,
// log of 0 or of a negative) come out as the std:: function gives them, as the same test checks. Each entry's
// result depends only on its argument, not on its position or the array's length: a tail shorter than a
// register is padded with an argument whose result is discarded, not handed to the scalar function.
//
// The vector code needs x86-64, glibc's libmvec (tanh and erfc: glibc 2.35 or later) and a build that defines
// TAPEGRAD_HAVE_LIBMVEC (CMake does, and links libmvec, when it finds it); otherwise, and on CPUs without AVX2,
// the scalar functions are used.

#include "real.hpp"

#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>

#if defined(TAPEGRAD_HAVE_LIBMVEC) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TAPEGRAD_VECTOR_MATH 1
// glibc libmvec's functions, 8 doubles (AVX-512) and 4 doubles (AVX2); declared with the target of their
// registers.
extern "C" {
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_exp(__m512d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_exp(__m256d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_log(__m512d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_log(__m256d);
}
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35)
#define TAPEGRAD_VECTOR_TANH_ERFC 1
extern "C" {
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_tanh(__m512d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_tanh(__m256d);
__attribute__((target("avx512f"))) __m512d _ZGVeN8v_erfc(__m512d);
__attribute__((target("avx2"))) __m256d _ZGVdN4v_erfc(__m256d);
}
#endif
#endif

namespace tapegrad {

/// The functions with a vector kernel.
enum class VectorFunction { exp, log, tanh, erfc };

/// Which kernels run an array: the widest the CPU has (the default), or the scalar function.
enum class VectorKernel { scalar, avx2, avx512 };

namespace detail {

/// The function itself, one entry.
template <VectorFunction F, Real T> T scalar_function(const T& x) {
  using std::erfc;
  using std::exp;
  using std::log;
  using std::tanh;
  if constexpr (F == VectorFunction::exp)
    return exp(x);
  else if constexpr (F == VectorFunction::log)
    return log(x);
  else if constexpr (F == VectorFunction::tanh)
    return tanh(x);
  else
    return T(erfc(x)); // T(): erfc of a 16-bit type is float's
}

/// Whether this build has a vector kernel for F: each function named, so that a new one has none until its
/// kernels are declared and called below.
template <VectorFunction F> constexpr bool has_vector_kernel() {
#if defined(TAPEGRAD_VECTOR_MATH)
  if (F == VectorFunction::exp || F == VectorFunction::log) return true;
#endif
#if defined(TAPEGRAD_VECTOR_TANH_ERFC)
  if (F == VectorFunction::tanh || F == VectorFunction::erfc) return true;
#endif
  return false;
}

#ifdef TAPEGRAD_VECTOR_MATH
inline VectorKernel widest_kernel() {
  static const VectorKernel kernel = [] {
    __builtin_cpu_init(); // in case the first call comes before the constructors that would run it
    return __builtin_cpu_supports("avx512f") ? VectorKernel::avx512
           : __builtin_cpu_supports("avx2")  ? VectorKernel::avx2
                                             : VectorKernel::scalar;
  }();
  return kernel;
}

/// The padding of a short tail: an argument inside the function's domain whose result is discarded.
template <VectorFunction F> constexpr double padding() { return F == VectorFunction::log ? 1.0 : 0.0; }

/// ln(2^-1076): below it exp(x) is under a quarter of the smallest subnormal (2^-1074), so it rounds to exactly +0.
inline constexpr double exp_zero_below = -1076 * std::numbers::ln2;

// libmvec's exp hands a register with any argument outside its fast range (an -inf: a masked score; an
// underflow) to the scalar exp lane by lane, 4 to 7 times slower than the vector path (half of every causal
// softmax row is -inf). Lanes whose result is exactly +0 are therefore taken out: their argument replaced by 0,
// their result set to +0, what the scalar exp gives them. NaN compares false and goes through unchanged.
__attribute__((target("avx512f"))) inline __m512d exp_avx512(__m512d v) {
  const __mmask8 zero = _mm512_cmp_pd_mask(v, _mm512_set1_pd(exp_zero_below), _CMP_LT_OQ);
  return _mm512_maskz_mov_pd(static_cast<__mmask8>(~zero),
                             _ZGVeN8v_exp(_mm512_mask_mov_pd(v, zero, _mm512_setzero_pd())));
}
__attribute__((target("avx2"))) inline __m256d exp_avx2(__m256d v) {
  const __m256d zero = _mm256_cmp_pd(v, _mm256_set1_pd(exp_zero_below), _CMP_LT_OQ);
  return _mm256_andnot_pd(zero, _ZGVdN4v_exp(_mm256_andnot_pd(zero, v)));
}

template <VectorFunction F> __attribute__((target("avx512f"))) inline __m512d call(__m512d v) {
  if constexpr (F == VectorFunction::exp) return exp_avx512(v);
  if constexpr (F == VectorFunction::log) return _ZGVeN8v_log(v);
#ifdef TAPEGRAD_VECTOR_TANH_ERFC
  if constexpr (F == VectorFunction::tanh) return _ZGVeN8v_tanh(v);
  if constexpr (F == VectorFunction::erfc) return _ZGVeN8v_erfc(v);
#endif
  static_assert(has_vector_kernel<F>(), "call<F>: F has no vector kernel; apply_in_place must not get here");
  return v;
}

template <VectorFunction F> __attribute__((target("avx2"))) inline __m256d call(__m256d v) {
  if constexpr (F == VectorFunction::exp) return exp_avx2(v);
  if constexpr (F == VectorFunction::log) return _ZGVdN4v_log(v);
#ifdef TAPEGRAD_VECTOR_TANH_ERFC
  if constexpr (F == VectorFunction::tanh) return _ZGVdN4v_tanh(v);
  if constexpr (F == VectorFunction::erfc) return _ZGVdN4v_erfc(v);
#endif
  static_assert(has_vector_kernel<F>(), "call<F>: F has no vector kernel; apply_in_place must not get here");
  return v;
}

// Each: whole registers, then the tail padded so that it goes through the same kernel as every other entry.
template <VectorFunction F> __attribute__((target("avx512f"))) inline void run_avx512(double* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm512_storeu_pd(x + i, call<F>(_mm512_loadu_pd(x + i)));
  if (i == n) return;
  const __mmask8 tail = static_cast<__mmask8>((1u << (n - i)) - 1);
  _mm512_mask_storeu_pd(x + i, tail, call<F>(_mm512_mask_loadu_pd(_mm512_set1_pd(padding<F>()), tail, x + i)));
}

template <VectorFunction F> __attribute__((target("avx2"))) inline void run_avx2(double* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    _mm256_storeu_pd(x + i, call<F>(_mm256_loadu_pd(x + i)));
  if (i == n) return;
  double tail[4] = {padding<F>(), padding<F>(), padding<F>(), padding<F>()};
  for (std::size_t j = i; j < n; ++j)
    tail[j - i] = x[j];
  _mm256_storeu_pd(tail, call<F>(_mm256_loadu_pd(tail)));
  for (std::size_t j = i; j < n; ++j)
    x[j] = tail[j - i];
}
#endif

} // namespace detail

/// The kernel apply_in_place<F, double> runs when asked for `requested`: a vector kernel the CPU lacks falls back
/// to the next narrower one, and a function this build has no vector kernel for is the scalar one.
template <VectorFunction F> VectorKernel kernel_used(VectorKernel requested) {
#ifdef TAPEGRAD_VECTOR_MATH
  if constexpr (detail::has_vector_kernel<F>()) {
    const VectorKernel widest = detail::widest_kernel();
    if (requested == VectorKernel::avx512 && widest == VectorKernel::avx512) return VectorKernel::avx512;
    if (requested != VectorKernel::scalar && widest != VectorKernel::scalar) return VectorKernel::avx2;
  }
#endif
  (void)requested;
  return VectorKernel::scalar;
}

/// The kernel apply_in_place<F, double> uses by default on this machine: the widest it has.
template <VectorFunction F> VectorKernel default_kernel() { return kernel_used<F>(VectorKernel::avx512); }

/// "libmvec AVX-512", "libmvec AVX2" or "scalar".
inline const char* kernel_name(VectorKernel k) {
  switch (k) {
  case VectorKernel::avx512:
    return "libmvec AVX-512";
  case VectorKernel::avx2:
    return "libmvec AVX2";
  case VectorKernel::scalar:
    break;
  }
  return "scalar";
}

/// x[i] = F(x[i]) for i < n. For double, the kernel kernel_used<F>(kernel) names; every other type uses the
/// scalar function.
template <VectorFunction F, Real T>
void apply_in_place(T* x, std::size_t n, VectorKernel kernel = default_kernel<F>()) {
#ifdef TAPEGRAD_VECTOR_MATH
  if constexpr (std::is_same_v<T, double> && detail::has_vector_kernel<F>()) {
    switch (kernel_used<F>(kernel)) {
    case VectorKernel::avx512:
      return detail::run_avx512<F>(x, n);
    case VectorKernel::avx2:
      return detail::run_avx2<F>(x, n);
    case VectorKernel::scalar:
      break;
    }
  }
#endif
  (void)kernel;
  for (std::size_t i = 0; i < n; ++i)
    x[i] = detail::scalar_function<F>(x[i]);
}

namespace detail {
#ifdef TAPEGRAD_VECTOR_MATH
/// softmax_row's AVX-512 body: the max (and whether the row holds a NaN), then exp(x - max) stored and summed,
/// then each divided by the sum, each a pass in 8-double registers. The tail is loaded under a mask; its
/// padding lanes hold -inf for the max, the max itself for the exps (exp(0), discarded), and are never stored
/// or summed.
__attribute__((target("avx512f"))) inline bool softmax_row_avx512(const double* x, double* out, std::size_t n) {
  const __m512d minus_inf = _mm512_set1_pd(-std::numeric_limits<double>::infinity());
  const std::size_t whole = n - n % 8;
  const __mmask8 tail = static_cast<__mmask8>((1u << (n - whole)) - 1);
  __m512d mx = minus_inf;
  __mmask8 nan = 0;
  for (std::size_t i = 0; i < whole; i += 8) {
    const __m512d v = _mm512_loadu_pd(x + i);
    nan |= _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
    mx = _mm512_mask_max_pd(mx, 0xff, mx, v); // _mm512_max_pd: GCC 12 warns of its undefined source
  }
  if (tail) {
    const __m512d v = _mm512_mask_loadu_pd(minus_inf, tail, x + whole);
    nan |= _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
    mx = _mm512_mask_max_pd(mx, 0xff, mx, v); // _mm512_max_pd: GCC 12 warns of its undefined source
  }
  double lanes[8]; // the lanes reduced by hand: GCC 12's _mm512_reduce_* warn of an uninitialised temporary
  _mm512_storeu_pd(lanes, mx);
  double m = lanes[0];
  for (int k = 1; k < 8; ++k)
    m = lanes[k] > m ? lanes[k] : m;
  if (nan || m == std::numeric_limits<double>::infinity() || m == -std::numeric_limits<double>::infinity())
    return false;
  const __m512d shift = _mm512_set1_pd(m);
  __m512d sum = _mm512_setzero_pd();
  for (std::size_t i = 0; i < whole; i += 8) {
    const __m512d e = exp_avx512(_mm512_sub_pd(_mm512_loadu_pd(x + i), shift));
    _mm512_storeu_pd(out + i, e);
    sum = _mm512_add_pd(sum, e);
  }
  if (tail) {
    const __m512d e = exp_avx512(_mm512_sub_pd(_mm512_mask_loadu_pd(shift, tail, x + whole), shift));
    _mm512_mask_storeu_pd(out + whole, tail, e);
    sum = _mm512_mask_add_pd(sum, tail, sum, e);
  }
  _mm512_storeu_pd(lanes, sum);
  double s = lanes[0];
  for (int k = 1; k < 8; ++k)
    s += lanes[k];
  const __m512d total = _mm512_set1_pd(s);
  for (std::size_t i = 0; i < whole; i += 8)
    _mm512_storeu_pd(out + i, _mm512_div_pd(_mm512_loadu_pd(out + i), total));
  if (tail)
    _mm512_mask_storeu_pd(out + whole, tail, _mm512_div_pd(_mm512_mask_loadu_pd(total, tail, out + whole), total));
  return true;
}
#endif
} // namespace detail

/// One row of softmax, out[j] = exp(x[j] - max_k x[k]) / sum_k exp(x[k] - max_k x[k]) for j < n (n >= 1; out may
/// be x), in AVX-512 registers: the max, the exps and their sum, and the division each one pass over the row
/// (Eigen's own passes are SSE2 in a portable build, and the subtraction, exp and sum are three). The exps are
/// exp_in_place's kernel on the same arguments; only the order of the sum differs from adding entry by entry.
/// Returns false, having written nothing, when it does not apply: the kernel asked for is not AVX-512 or the CPU
/// lacks it, the row holds a NaN, or its max is infinite (every entry -inf, or a +inf); the caller then takes
/// its general path, which handles those rows.
inline bool softmax_row(const double* x, double* out, std::size_t n,
                        VectorKernel kernel = default_kernel<VectorFunction::exp>()) {
#ifdef TAPEGRAD_VECTOR_MATH
  if (n > 0 && kernel_used<VectorFunction::exp>(kernel) == VectorKernel::avx512)
    return detail::softmax_row_avx512(x, out, n);
#endif
  (void)x;
  (void)out;
  (void)n;
  (void)kernel;
  return false;
}

template <Real T> void exp_in_place(T* x, std::size_t n) { apply_in_place<VectorFunction::exp>(x, n); }
template <Real T> void log_in_place(T* x, std::size_t n) { apply_in_place<VectorFunction::log>(x, n); }
template <Real T> void tanh_in_place(T* x, std::size_t n) { apply_in_place<VectorFunction::tanh>(x, n); }
template <Real T> void erfc_in_place(T* x, std::size_t n) { apply_in_place<VectorFunction::erfc>(x, n); }

} // namespace tapegrad

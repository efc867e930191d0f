#pragma once
// How many bytes a value holds, counting what its entries keep outside their objects (an MPFR number's limbs, a
// dual number's two parts'): what Tape::stats() reports.

#include "dual.hpp"
#include "real.hpp"

#include <concepts>
#include <cstddef>

namespace tapegrad {

/// Bytes an entry keeps outside its object.
template <class U> std::size_t outside_bytes(const U& x) {
  if constexpr (std::same_as<U, mpfr_real>)
    return (static_cast<std::size_t>(x.precision()) * 3322 / 1000 / 64 + 1) * 8;
  else if constexpr (is_dual<U>)
    return outside_bytes(x.val) + outside_bytes(x.eps);
  else
    return 0;
}

/// Bytes the entries of m hold, inside and outside their objects.
template <Real T> std::size_t storage_bytes(const Matrix<T>& m) {
  const std::size_t per = sizeof(T) + (m.size() > 0 ? outside_bytes(m.data()[0]) : 0);
  return static_cast<std::size_t>(m.size()) * per;
}

} // namespace tapegrad

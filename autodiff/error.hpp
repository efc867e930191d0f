#pragma once
// Errors. User mistakes throw one of these, in release builds too, with a message that names the op, the
// operands' labels and their shapes. Broken internal invariants are assertions, not exceptions.

#include <stdexcept>
#include <string>

namespace tapegrad {

/// Base of every exception tapegrad throws for a user error.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Operand shapes an op cannot combine, or a seed whose shape differs from its output.
class ShapeError : public Error {
public:
  using Error::Error;
};

/// The API used wrongly: a Var from another tape or a cleared one, a non-scalar output without a seed...
class UsageError : public Error {
public:
  using Error::Error;
};

/// Anomaly mode (TapeOptions::detect_anomaly): a value or a gradient that became NaN or infinite, named
/// with its node, op, parents, shape and coordinate.
class AnomalyError : public Error {
public:
  using Error::Error;
};

/// A value larger than the documented limit (TapeOptions::max_entries), refused before any allocation.
class LimitError : public Error {
public:
  using Error::Error;
};

/// An entry outside an op's domain (log of an entry <= 0): the message names the op, the node and the entry.
class DomainError : public Error {
public:
  using Error::Error;
};

/// "3x4"
inline std::string shape_string(long rows, long cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

} // namespace tapegrad

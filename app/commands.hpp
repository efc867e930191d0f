#pragma once
// The subcommands of the tapegrad program, one file each.
#include <ostream>

namespace tapegrad::app {

/// No arguments: the chapter's worked example 1 in double and in 50 digits, printed in full.
int run_default(std::ostream& out);

} // namespace tapegrad::app

// Explicit instantiations of per-type code for every engine type of the scalar table (scalar_types.hpp).
// No include guard: a header includes this after defining TAPEGRAD_INSTANCE(prefix, T) as the explicit
// instantiation of its own templates for engine type T, `prefix` being `extern` or nothing; this expands it
// and undefines it.
//
// In a build that links the compiled instances (our own targets link tapegrad_instances, whose
// TAPEGRAD_COMPILED_CHECKS is public), every file declares them extern, so the ops' forward and VJP code, the
// checker's driver and the attention check are compiled once per type, in cmake/instances.cpp.in (one file
// per type, TAPEGRAD_INSTANCES_OF naming it), instead of in every file that uses them: a clean build of the
// project spends most of its time there otherwise. A user of the header-only library defines neither macro
// and compiles what it uses, as before.
#ifdef TAPEGRAD_COMPILED_CHECKS
#define TAPEGRAD_SCALAR(type, spelling, name) TAPEGRAD_INSTANCE(extern, type)
#include "scalar_types.hpp"
#undef TAPEGRAD_SCALAR
#ifdef TAPEGRAD_INSTANCES_OF
TAPEGRAD_INSTANCE(, TAPEGRAD_INSTANCES_OF)
#endif
#endif
#undef TAPEGRAD_INSTANCE

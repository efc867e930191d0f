// Explicit instantiations of per-type code for every engine type of the scalar table (scalar_types.hpp).
// No include guard: a header includes this after defining TAPEGRAD_INSTANCE(prefix, T) as the explicit
// instantiation of its own templates for engine type T (and, through TAPEGRAD_WITH_DUAL, its dual numbers),
// `prefix` being `extern` or nothing; this expands it for each type and undefines it.
//
// Our own targets link tapegrad_instances, whose TAPEGRAD_EXTERN_INSTANCES is public: every file of theirs
// declares that code extern, and cmake/instances.cpp.in (one generated file per type, TAPEGRAD_INSTANCES_OF
// naming it) defines it, so each op's forward and VJP, the tape, the attention graphs, the checker's driver,
// the per-node check and the attention check are compiled once per type instead of in every file that uses
// them (README, "Build time"). A user of the header-only library defines neither macro and compiles what it
// uses. An explicit instantiation declaration does not apply to an inline function (a member defined inside
// its class is one), so what is declared here is defined outside its class and not inline.
#ifdef TAPEGRAD_EXTERN_INSTANCES
#define TAPEGRAD_SCALAR(type, spelling, name) TAPEGRAD_INSTANCE(extern, type)
#include "scalar_types.hpp"
#undef TAPEGRAD_SCALAR
#ifdef TAPEGRAD_INSTANCES_OF
TAPEGRAD_INSTANCE(, TAPEGRAD_INSTANCES_OF)
#endif
#endif
#undef TAPEGRAD_INSTANCE

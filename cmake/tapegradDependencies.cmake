# Finds what the tapegrad library needs; used by the build and by the installed package config, so a
# consumer's find_package(tapegrad) finds the same things. A missing dependency stops with a message that
# names the Debian package to install.

macro(tapegrad_missing what package)
  message(FATAL_ERROR "tapegrad needs ${what}, which was not found: install the Debian package ${package} "
                      "(apt-get install ${package}; scripts/install-deps installs everything)")
endmacro()

find_package(Eigen3 3.4 CONFIG QUIET)
if(NOT Eigen3_FOUND)
  tapegrad_missing("Eigen 3.4" libeigen3-dev)
endif()

find_package(Boost 1.74 QUIET)
if(NOT Boost_FOUND OR NOT EXISTS "${Boost_INCLUDE_DIRS}/boost/multiprecision/mpfr.hpp")
  tapegrad_missing("Boost >= 1.74 (Multiprecision, Math)" libboost-dev)
endif()

find_package(nlohmann_json 3 CONFIG QUIET)
if(NOT nlohmann_json_FOUND)
  tapegrad_missing("nlohmann-json (graph files)" nlohmann-json3-dev)
endif()

find_package(spdlog CONFIG QUIET)
if(NOT spdlog_FOUND)
  tapegrad_missing("spdlog (warnings such as stale gradients)" libspdlog-dev)
endif()

find_path(TAPEGRAD_MPFR_INCLUDE_DIR mpfr.h)
find_library(TAPEGRAD_MPFR_LIBRARY mpfr)
if(NOT TAPEGRAD_MPFR_INCLUDE_DIR OR NOT TAPEGRAD_MPFR_LIBRARY)
  tapegrad_missing("MPFR" libmpfr-dev)
endif()
find_path(TAPEGRAD_GMP_INCLUDE_DIR gmp.h)
find_library(TAPEGRAD_GMP_LIBRARY gmp)
if(NOT TAPEGRAD_GMP_INCLUDE_DIR OR NOT TAPEGRAD_GMP_LIBRARY)
  tapegrad_missing("GMP" libgmp-dev)
endif()

if(NOT TARGET tapegrad::mpfr)
  add_library(tapegrad::mpfr INTERFACE IMPORTED)
  set_target_properties(tapegrad::mpfr PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${TAPEGRAD_MPFR_INCLUDE_DIR};${TAPEGRAD_GMP_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${TAPEGRAD_MPFR_LIBRARY};${TAPEGRAD_GMP_LIBRARY}")
endif()

# An optional library: when find_library finds `library` (cached in `variable`; extra arguments go to
# find_library), the imported target tapegrad::<name> links it and defines `definition` for every user of
# tapegrad. Nothing happens when the target exists already or the library is missing.
macro(tapegrad_optional_library name variable definition library)
  if(NOT TARGET tapegrad::${name})
    find_library(${variable} ${library} ${ARGN})
    if(${variable})
      add_library(tapegrad::${name} INTERFACE IMPORTED)
      set_target_properties(tapegrad::${name} PROPERTIES INTERFACE_COMPILE_DEFINITIONS ${definition}
                                                         INTERFACE_LINK_LIBRARIES "${${variable}}")
    endif()
  endif()
endmacro()

# BLAS: when OpenBLAS's serial build is installed (Debian libopenblas-serial-dev), Eigen hands float and
# double products to it (EIGEN_USE_BLAS): bench_attention measured 2x faster at T = 512 and 2.5x at T = 2
# than Eigen's own kernels in a portable (-march=x86-64) build, because OpenBLAS picks AVX-512 kernels at
# run time. The serial build runs each call on the calling thread, so the checker's own threads neither
# oversubscribe the cores nor change any result. -DTAPEGRAD_BLAS=OFF, or no OpenBLAS, keeps plain Eigen.
if(NOT DEFINED TAPEGRAD_BLAS)
  set(TAPEGRAD_BLAS ON)
endif()
if(TAPEGRAD_BLAS)
  tapegrad_optional_library(blas TAPEGRAD_OPENBLAS_LIBRARY EIGEN_USE_BLAS openblas
                            PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-serial NO_DEFAULT_PATH)
endif()

# Vector exp, log, tanh and erfc: glibc's libmvec (part of libc6-dev on x86-64), AVX2 or AVX-512 chosen at run time
# (autodiff/vector_math.hpp; README quotes what they buy). Without it, the scalar functions.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  tapegrad_optional_library(mvec TAPEGRAD_MVEC_LIBRARY TAPEGRAD_HAVE_LIBMVEC mvec)
endif()

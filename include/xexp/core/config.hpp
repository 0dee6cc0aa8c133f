#pragma once
// Header-only or compiled: how xexp's heaviest definitions reach a program.
//
// Header-only (the CMake target xexp::header_only), every translation unit that uses the optimizer
// compiles the built-in rule sets, the evaluator's kernels, the loader, the inference and the driver
// again (two minutes of g++ -O2 for a file that includes xexp/all.hpp).
//
// Compiled mode, the default as fmt's is: link the CMake target xexp::xexp (or define XEXP_COMPILED_LIB
// everywhere and link libxexp_compiled). The headers then only declare those parts, and the library
// defines them once. Each part of the library is one source file under src/ that defines
// XEXP_BUILD_<PART> before including xexp, so that exactly one object file holds each definition.
//
//   XEXP_INLINE   the linkage of a compiled-once function: inline when header-only, external otherwise.
#if defined(XEXP_COMPILED_LIB)
#define XEXP_INLINE
#else
#define XEXP_INLINE inline
#endif

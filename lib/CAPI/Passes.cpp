//===- Passes.cpp - C API of the norm passes --------------------*- C++ -*-===//
//
// Registration of every norm pass and pipeline, and the generated
// constructors of the individual passes.
//
//===----------------------------------------------------------------------===//

#include "norm-c/Passes.h"
#include "norm/Conversion/Passes.h"
#include "norm/InitAllNorm.h"
#include "norm/Transforms/Passes.h"

#include "mlir/CAPI/Pass.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::norm;

void mlirRegisterNormPasses(void) {
  // The registry is global; registering twice is harmless but wasteful.
  static bool registered = [] {
    registerAllNormPasses();
    return true;
  }();
  (void)registered;
}

#include "norm/Conversion/Passes.capi.cpp.inc"
#include "norm/Transforms/Passes.capi.cpp.inc"

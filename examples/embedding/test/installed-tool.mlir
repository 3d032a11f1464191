// The RUN lines find the norm-opt of NORM_MLIR_TOOLS_DIR first on PATH.
// RUN: %python -c "import shutil; print(shutil.which('norm-opt'))" | FileCheck %s -DTOOLS=%norm_mlir_tools_dir
// CHECK: [[TOOLS]]/norm-opt

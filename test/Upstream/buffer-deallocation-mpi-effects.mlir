// UPSTREAM LIMITATION, recorded here; not a bug of norm-mlir.
//
// LLVM 22's mpi.allreduce (and mpi.init, mpi.finalize, mpi.send,
// mpi.recv) declare no memory effects, so buffer-deallocation-pipeline,
// which norm-cpu-pipeline runs, rejects any module holding one. norm-mlir
// attaches MemoryEffectOpInterface models to them (MPIMemoryEffects.cpp):
// norm-opt runs the same pipeline on this module.
//
// When the first RUN line starts failing, the LLVM in use declares the
// effects: delete the models.

// RUN: not mlir-opt %s --buffer-deallocation-pipeline 2>&1 | FileCheck %s --check-prefix=UPSTREAM
// RUN: norm-opt %s --buffer-deallocation-pipeline | FileCheck %s

// UPSTREAM: error: ops with unknown memory side effects are not supported
// CHECK-LABEL: func.func @dealloc
// CHECK: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK: mpi.allreduce(%{{.*}}, %[[A]], MPI_SUM, %{{.*}})
// CHECK: memref.copy %[[A]]
// CHECK: memref.dealloc %[[A]]
func.func @dealloc(%b: memref<4xf32>) {
  %world = mpi.comm_world : !mpi.comm
  %a = memref.alloc() : memref<4xf32>
  mpi.allreduce(%b, %a, MPI_SUM, %world) : memref<4xf32>, memref<4xf32>
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  return
}

// RUN: norm-opt %s -split-input-file --pass-pipeline="builtin.module(gpu.module(convert-gpu-to-nvvm,canonicalize,norm-annotate-kernel-args))" | FileCheck %s

// Kernels of norm-lower-gpu: the aligned pointer of every memref descriptor
// is noalias, and readonly where it is only loaded from; the allocated
// pointers, offsets, sizes, strides and scalars are left alone.
// CHECK-LABEL: llvm.func @f_norm_kernel
//  CHECK-SAME: (%arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64,
//  CHECK-SAME:  %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64,
//  CHECK-SAME:  %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64)
// CHECK-LABEL: llvm.func @f_norm_kernel_0
//  CHECK-SAME: (%arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr {llvm.noalias, llvm.readonly}, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64,
//  CHECK-SAME:  %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64)
gpu.module @f_norm_kernel {
  gpu.func @f_norm_kernel(%x: memref<?xf32>, %w: memref<?xf32>, %y: memref<?xf32>, %i: index) kernel {
    %v = vector.load %x[%i] : memref<?xf32>, vector<4xf32>
    %u = vector.load %w[%i] : memref<?xf32>, vector<4xf32>
    %p = arith.mulf %v, %u : vector<4xf32>
    vector.store %p, %y[%i] : memref<?xf32>, vector<4xf32>
    gpu.return
  }
  gpu.func @f_norm_kernel_0(%x: memref<?xbf16>, %y: memref<?xbf16>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<?xbf16>
    memref.store %v, %y[%c0] : memref<?xbf16>
    gpu.return
  }
}

// -----

// Other kernels and non-kernel functions are left alone.
// CHECK-LABEL: llvm.func @user_kernel
//   CHECK-NOT: llvm.noalias
// CHECK-LABEL: llvm.func @g_norm_kernel_helper
//   CHECK-NOT: llvm.noalias
// CHECK-LABEL: llvm.func @h_norm_kernel
//   CHECK-NOT: llvm.noalias
gpu.module @user_kernel {
  gpu.func @user_kernel(%x: memref<?xf32>, %y: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<?xf32>
    memref.store %v, %y[%c0] : memref<?xf32>
    gpu.return
  }
  gpu.func @g_norm_kernel_helper(%x: memref<?xf32>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<?xf32>
    gpu.return
  }
  gpu.func @h_norm_kernel(%x: memref<?xf32>) {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<?xf32>
    gpu.return
  }
}

// -----

// A pointer that escapes (stored as a value) is noalias but not readonly;
// workgroup attributions are not arguments.
// CHECK-LABEL: llvm.func @v_norm_kernel
//  CHECK-SAME: (%arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64,
//  CHECK-SAME:  %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr {llvm.noalias}, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64)
gpu.module @v_norm_kernel {
  gpu.func @v_norm_kernel(%x: memref<?xf32>, %y: memref<?xi64>) workgroup(%scratch: memref<4xf32, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %x[%c0] : memref<?xf32>
    memref.store %v, %scratch[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
    %p = memref.extract_aligned_pointer_as_index %x : memref<?xf32> -> index
    %q = arith.index_cast %p : index to i64
    memref.store %q, %y[%c0] : memref<?xi64>
    gpu.return
  }
}

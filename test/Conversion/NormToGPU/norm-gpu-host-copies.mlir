// RUN: norm-opt %s -split-input-file --norm-gpu-host-copies | FileCheck %s

// One launch: the input is copied in, the output (written, not read, by a
// kernel of norm-lower-gpu) only copied back; both freed after the launch.
// Scalars and device buffers are left alone.

// CHECK-LABEL: func.func @one_launch
//  CHECK-SAME:   %[[X:.*]]: memref<?xf32>, %[[Y:.*]]: memref<?xf32>, %[[N:.*]]: index
//       CHECK:   %[[C0:.*]] = arith.constant 0 : index
//       CHECK:   %[[XN:.*]] = memref.dim %[[X]], %[[C0]]
//       CHECK:   %[[XD:.*]] = gpu.alloc (%[[XN]]) : memref<?xf32>
//  CHECK-NEXT:   gpu.memcpy %[[XD]], %[[X]] : memref<?xf32>, memref<?xf32>
//       CHECK:   %[[YN:.*]] = memref.dim %[[Y]], %{{.*}}
//       CHECK:   %[[YD:.*]] = gpu.alloc (%[[YN]]) : memref<?xf32>
//  CHECK-NEXT:   gpu.launch_func @f_norm_kernel::@f_norm_kernel {{.*}} args(%[[N]] : index, %[[XD]] : memref<?xf32>, %[[YD]] : memref<?xf32>)
//  CHECK-NEXT:   gpu.memcpy %[[Y]], %[[YD]] : memref<?xf32>, memref<?xf32>
//  CHECK-NEXT:   gpu.dealloc %[[XD]]
//  CHECK-NEXT:   gpu.dealloc %[[YD]]
//  CHECK-NEXT:   return
module attributes {gpu.container_module} {
  gpu.module @f_norm_kernel {
    gpu.func @f_norm_kernel(%n: index, %x: memref<?xf32>, %y: memref<?xf32>) kernel {
      %v = memref.load %x[%n] : memref<?xf32>
      memref.store %v, %y[%n] : memref<?xf32>
      gpu.return
    }
  }
  func.func @one_launch(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @f_norm_kernel::@f_norm_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : index, %x : memref<?xf32>, %y : memref<?xf32>)
    return
  }
}

// -----

// A run of launches (only device allocations and pure ops in between) shares
// one copy of each host buffer: x is copied in once for the two split
// kernels, the device temporary is left alone, y is copied back after the
// run. y, written by the first kernel and read by the second, stays on the
// device in between.

// CHECK-LABEL: func.func @run_shares_copies
//  CHECK-SAME:   %[[X:.*]]: memref<64xf32>, %[[Y:.*]]: memref<64xf32>
//       CHECK:   %[[T:.*]] = gpu.alloc () : memref<8xf32>
//       CHECK:   %[[XD:.*]] = gpu.alloc () : memref<64xf32>
//  CHECK-NEXT:   gpu.memcpy %[[XD]], %[[X]]
//       CHECK:   gpu.launch_func @g_norm_kernel::@g_norm_kernel {{.*}} args(%[[XD]] : memref<64xf32>, %[[T]] : memref<8xf32>)
//  CHECK-NEXT:   arith.addi
//  CHECK-NEXT:   %[[YD:.*]] = gpu.alloc () : memref<64xf32>
//  CHECK-NEXT:   gpu.launch_func @g_norm_kernel::@g_norm_kernel_0 {{.*}} args(%[[XD]] : memref<64xf32>, %[[T]] : memref<8xf32>, %[[YD]] : memref<64xf32>)
//  CHECK-NEXT:   gpu.launch_func @g_norm_kernel::@g_norm_kernel_1 {{.*}} args(%[[YD]] : memref<64xf32>)
//  CHECK-NEXT:   gpu.memcpy %[[Y]], %[[YD]]
//  CHECK-NEXT:   gpu.dealloc %[[XD]]
//  CHECK-NEXT:   gpu.dealloc %[[YD]]
//  CHECK-NEXT:   gpu.dealloc %[[T]]
//  CHECK-NOT:    gpu.memcpy
module attributes {gpu.container_module} {
  gpu.module @g_norm_kernel {
    gpu.func @g_norm_kernel(%x: memref<64xf32>, %t: memref<8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<64xf32>
      memref.store %v, %t[%c0] : memref<8xf32>
      gpu.return
    }
    gpu.func @g_norm_kernel_0(%x: memref<64xf32>, %t: memref<8xf32>, %y: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<64xf32>
      %w = memref.load %t[%c0] : memref<8xf32>
      %s = arith.addf %v, %w : f32
      memref.store %s, %y[%c0] : memref<64xf32>
      gpu.return
    }
    gpu.func @g_norm_kernel_1(%y: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %v = memref.load %y[%c0] : memref<64xf32>
      memref.store %v, %y[%c1] : memref<64xf32>
      gpu.return
    }
  }
  func.func @run_shares_copies(%x: memref<64xf32>, %y: memref<64xf32>, %i: index) {
    %c1 = arith.constant 1 : index
    %t = gpu.alloc () : memref<8xf32>
    gpu.launch_func @g_norm_kernel::@g_norm_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<64xf32>, %t : memref<8xf32>)
    %j = arith.addi %i, %c1 : index
    gpu.launch_func @g_norm_kernel::@g_norm_kernel_0 blocks in (%j, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<64xf32>, %t : memref<8xf32>, %y : memref<64xf32>)
    gpu.launch_func @g_norm_kernel::@g_norm_kernel_1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%y : memref<64xf32>)
    gpu.dealloc %t : memref<8xf32>
    return
  }
}

// -----

// A host op that touches memory ends the run: each run gets its own copies.
// A kernel not of norm-lower-gpu may write part of an output: its host
// operands are always copied in.

// CHECK-LABEL: func.func @runs_split_by_host_ops
//  CHECK-SAME:   %[[X:.*]]: memref<16xf32>, %[[Y:.*]]: memref<16xf32>
//       CHECK:   %[[XD:.*]] = gpu.alloc () : memref<16xf32>
//  CHECK-NEXT:   gpu.memcpy %[[XD]], %[[X]]
//  CHECK-NEXT:   %[[YD:.*]] = gpu.alloc () : memref<16xf32>
//  CHECK-NEXT:   gpu.memcpy %[[YD]], %[[Y]]
//  CHECK-NEXT:   gpu.launch_func @other::@copy {{.*}} args(%[[XD]] : memref<16xf32>, %[[YD]] : memref<16xf32>)
//  CHECK-NEXT:   gpu.memcpy %[[Y]], %[[YD]]
//  CHECK-NEXT:   gpu.dealloc %[[XD]]
//  CHECK-NEXT:   gpu.dealloc %[[YD]]
//  CHECK-NEXT:   memref.store
//  CHECK-NEXT:   %[[XD2:.*]] = gpu.alloc () : memref<16xf32>
//  CHECK-NEXT:   gpu.memcpy %[[XD2]], %[[X]]
//  CHECK-NEXT:   %[[YD2:.*]] = gpu.alloc () : memref<16xf32>
//  CHECK-NEXT:   gpu.memcpy %[[YD2]], %[[Y]]
//  CHECK-NEXT:   gpu.launch_func @other::@copy {{.*}} args(%[[XD2]] : memref<16xf32>, %[[YD2]] : memref<16xf32>)
//  CHECK-NEXT:   gpu.memcpy %[[Y]], %[[YD2]]
module attributes {gpu.container_module} {
  gpu.module @other {
    gpu.func @copy(%x: memref<16xf32>, %y: memref<16xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %x[%c0] : memref<16xf32>
      memref.store %v, %y[%c0] : memref<16xf32>
      gpu.return
    }
  }
  func.func @runs_split_by_host_ops(%x: memref<16xf32>, %y: memref<16xf32>, %f: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @other::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<16xf32>, %y : memref<16xf32>)
    memref.store %f, %x[%c0] : memref<16xf32>
    gpu.launch_func @other::@copy blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : memref<16xf32>, %y : memref<16xf32>)
    return
  }
}

// -----

// Two views of one host buffer in a run, one of them written: the run ends
// between the launches, so the second reads what the first copied back.
// Views in the kernel count: a store through a view writes the argument.

// CHECK-LABEL: func.func @views_of_one_buffer
//       CHECK:   %[[A:.*]] = memref.collapse_shape
//       CHECK:   %[[B:.*]] = memref.cast
//       CHECK:   %[[AD:.*]] = gpu.alloc () : memref<64xf32>
//  CHECK-NEXT:   gpu.launch_func @v_norm_kernel::@v_norm_kernel {{.*}} args(%[[AD]] : memref<64xf32>)
//  CHECK-NEXT:   gpu.memcpy %[[A]], %[[AD]]
//  CHECK-NEXT:   gpu.dealloc %[[AD]]
//  CHECK-NEXT:   %[[C0:.*]] = arith.constant 0 : index
//  CHECK-NEXT:   %[[BN:.*]] = memref.dim %[[B]], %[[C0]]
//  CHECK-NEXT:   %[[BD:.*]] = gpu.alloc (%[[BN]]) : memref<?xf32>
//  CHECK-NEXT:   gpu.memcpy %[[BD]], %[[B]]
//  CHECK-NEXT:   gpu.launch_func @v_norm_kernel::@v_norm_kernel_0 {{.*}} args(%[[BD]] : memref<?xf32>)
//  CHECK-NEXT:   gpu.dealloc %[[BD]]
module attributes {gpu.container_module} {
  gpu.module @v_norm_kernel {
    gpu.func @v_norm_kernel(%a: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %f = arith.constant 1.0 : f32
      %view = memref.expand_shape %a [[0, 1]] output_shape [8, 8] : memref<64xf32> into memref<8x8xf32>
      memref.store %f, %view[%c0, %c0] : memref<8x8xf32>
      gpu.return
    }
    gpu.func @v_norm_kernel_0(%b: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %b[%c0] : memref<?xf32>
      gpu.return
    }
  }
  func.func @views_of_one_buffer(%m: memref<8x8xf32>) {
    %c1 = arith.constant 1 : index
    %a = memref.collapse_shape %m [[0, 1]] : memref<8x8xf32> into memref<64xf32>
    %b = memref.cast %a : memref<64xf32> to memref<?xf32>
    gpu.launch_func @v_norm_kernel::@v_norm_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>)
    gpu.launch_func @v_norm_kernel::@v_norm_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<?xf32>)
    return
  }
}

// -----

// Device memory is left alone: views of gpu.alloc buffers and memrefs with
// a memory space. Launches in nested regions get copies in their block.

// CHECK-LABEL: func.func @device_and_nested
//       CHECK:   %[[D:.*]] = gpu.alloc () : memref<4x16xf32>
//       CHECK:   %[[V:.*]] = memref.collapse_shape %[[D]]
//   CHECK-NOT:   gpu.memcpy
//       CHECK:   gpu.launch_func @d_norm_kernel::@d_norm_kernel {{.*}} args(%[[V]] : memref<64xf32>)
//   CHECK-NOT:   gpu.memcpy
//       CHECK:   gpu.launch_func @d_norm_kernel::@d_norm_kernel_0 {{.*}} args(%{{.*}} : memref<64xf32, 1>)
//       CHECK:   scf.if
//  CHECK-NEXT:     %[[HD:.*]] = gpu.alloc () : memref<64xf32>
//  CHECK-NEXT:     gpu.memcpy %[[HD]], %{{.*}}
//  CHECK-NEXT:     gpu.launch_func @d_norm_kernel::@d_norm_kernel {{.*}} args(%[[HD]] : memref<64xf32>)
//  CHECK-NEXT:     gpu.dealloc %[[HD]]
//  CHECK-NEXT:   }
module attributes {gpu.container_module} {
  gpu.module @d_norm_kernel {
    gpu.func @d_norm_kernel(%a: memref<64xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<64xf32>
      gpu.return
    }
    gpu.func @d_norm_kernel_0(%a: memref<64xf32, 1>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %a[%c0] : memref<64xf32, 1>
      gpu.return
    }
  }
  func.func @device_and_nested(%h: memref<64xf32>, %s: memref<64xf32, 1>, %p: i1) {
    %c1 = arith.constant 1 : index
    %d = gpu.alloc () : memref<4x16xf32>
    %v = memref.collapse_shape %d [[0, 1]] : memref<4x16xf32> into memref<64xf32>
    gpu.launch_func @d_norm_kernel::@d_norm_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%v : memref<64xf32>)
    gpu.launch_func @d_norm_kernel::@d_norm_kernel_0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%s : memref<64xf32, 1>)
    scf.if %p {
      gpu.launch_func @d_norm_kernel::@d_norm_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%h : memref<64xf32>)
    }
    gpu.dealloc %d : memref<4x16xf32>
    return
  }
}

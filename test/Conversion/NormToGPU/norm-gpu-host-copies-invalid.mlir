// RUN: norm-opt %s -split-input-file --norm-gpu-host-copies -verify-diagnostics

module attributes {gpu.container_module} {
  gpu.module @k_norm_kernel {
    gpu.func @k_norm_kernel(%a: memref<4xf32, strided<[2]>>) kernel {
      gpu.return
    }
  }
  func.func @strided_host_operand(%m: memref<8xf32>) {
    %c1 = arith.constant 1 : index
    %s = memref.subview %m[0] [4] [2] : memref<8xf32> to memref<4xf32, strided<[2]>>
    // expected-error @below {{norm-gpu-host-copies: kernel operand of type 'memref<4xf32, strided<[2]>>' is a host memref without the identity layout; gpu.memcpy copies contiguous memrefs only}}
    gpu.launch_func @k_norm_kernel::@k_norm_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%s : memref<4xf32, strided<[2]>>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k_norm_kernel {
    gpu.func @k_norm_kernel(%a: memref<64xf32>, %b: memref<8x8xf32>) kernel {
      %c0 = arith.constant 0 : index
      %f = arith.constant 1.0 : f32
      memref.store %f, %a[%c0] : memref<64xf32>
      gpu.return
    }
  }
  func.func @aliasing_operands(%m: memref<8x8xf32>) {
    %c1 = arith.constant 1 : index
    %a = memref.collapse_shape %m [[0, 1]] : memref<8x8xf32> into memref<64xf32>
    // expected-error @below {{norm-gpu-host-copies: two operands of the launch are views of one host buffer and one of them is written; separate device copies would not keep their aliasing}}
    gpu.launch_func @k_norm_kernel::@k_norm_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<64xf32>, %m : memref<8x8xf32>)
    return
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @k_norm_kernel {
    gpu.func @k_norm_kernel(%a: memref<64xf32>) kernel {
      gpu.return
    }
  }
  func.func @async_launch(%m: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %t = gpu.wait async
    // expected-error @below {{norm-gpu-host-copies: runs before gpu-async-region; asynchronous launches are not supported}}
    %u = gpu.launch_func async [%t] @k_norm_kernel::@k_norm_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<64xf32>)
    return
  }
}

// RUN: norm-opt %s -norm-pack-fp4 -split-input-file | FileCheck %s

// Signatures, allocations and deallocations: the last dim halved, i8.
// CHECK-LABEL: func @signature
//  CHECK-SAME: (%[[A:.*]]: memref<4x32xi8>, %[[B:.*]]: memref<?x?xi8>, %[[N:.*]]: index) -> memref<?x8xi8>
//       CHECK: %[[H:.*]] = arith.shrui %[[N]], %{{.*}} : index
//       CHECK: %[[M:.*]] = memref.alloc(%[[N]], %[[H]]) : memref<?x?xi8>
//       CHECK: memref.dealloc %[[M]] : memref<?x?xi8>
//       CHECK: %[[R:.*]] = memref.alloc(%[[N]]) : memref<?x8xi8>
//       CHECK: return %[[R]] : memref<?x8xi8>
func.func @signature(%a: memref<4x64xf4E2M1FN>, %b: memref<?x?xf4E2M1FN>, %n: index) -> memref<?x16xf4E2M1FN> {
  %m = memref.alloc(%n, %n) : memref<?x?xf4E2M1FN>
  memref.dealloc %m : memref<?x?xf4E2M1FN>
  %r = memref.alloc(%n) : memref<?x16xf4E2M1FN>
  return %r : memref<?x16xf4E2M1FN>
}

// -----

// Vectors of an even length: byte vectors at the halved index.
// CHECK-LABEL: func @vectors
//  CHECK-SAME: (%[[M:.*]]: memref<8x32xi8>, %[[I:.*]]: index, %[[J:.*]]: index)
//       CHECK: %[[H:.*]] = arith.shrui %[[J]], %{{.*}} : index
//       CHECK: %[[B:.*]] = vector.load %[[M]][%[[I]], %[[H]]] : memref<8x32xi8>, vector<16xi8>
//       CHECK: %[[C:.*]] = vector.bitcast %[[B]] : vector<16xi8> to vector<32xi4>
//       CHECK: %[[V:.*]] = arith.bitcast %[[C]] : vector<32xi4> to vector<32xf4E2M1FN>
//       CHECK: %[[S:.*]] = arith.bitcast %[[V]] : vector<32xf4E2M1FN> to vector<32xi4>
//       CHECK: %[[SB:.*]] = vector.bitcast %[[S]] : vector<32xi4> to vector<16xi8>
//       CHECK: vector.store %[[SB]], %[[M]][%[[I]], %{{.*}}] : memref<8x32xi8>, vector<16xi8>
//       CHECK: vector.load %[[M]][%[[I]], %{{.*}}] : memref<8x32xi8>, vector<8xi8>
//       CHECK: vector.store %{{.*}}, %[[M]][%[[I]], %{{.*}}] : memref<8x32xi8>, vector<4xi8>
func.func @vectors(%m: memref<8x64xf4E2M1FN>, %i: index, %j: index) -> vector<16xf4E2M1FN> {
  %v = vector.load %m[%i, %j] : memref<8x64xf4E2M1FN>, vector<32xf4E2M1FN>
  vector.store %v, %m[%i, %j] : memref<8x64xf4E2M1FN>, vector<32xf4E2M1FN>
  %z = arith.constant 0.0 : f4E2M1FN
  %w = vector.transfer_read %m[%i, %j], %z {in_bounds = [true]} : memref<8x64xf4E2M1FN>, vector<16xf4E2M1FN>
  %e = vector.extract_strided_slice %w {offsets = [0], sizes = [8], strides = [1]} : vector<16xf4E2M1FN> to vector<8xf4E2M1FN>
  vector.transfer_write %e, %m[%i, %j] {in_bounds = [true]} : vector<8xf4E2M1FN>, memref<8x64xf4E2M1FN>
  return %w : vector<16xf4E2M1FN>
}

// -----

// Codes truncated from wider integers (the quantization's conversions) are
// packed with shuffles, on the host as in kernels: the even and odd codes
// truncated to i8, `even & 0xF | odd << 4`, one byte vector stored. A
// transfer_write and a store both do so.
// CHECK-LABEL: func @host_codes
//  CHECK-SAME: (%[[M:.*]]: memref<64xi8>, %[[C:.*]]: vector<8xi32>, %[[I:.*]]: index)
//       CHECK: %[[T:.*]] = arith.trunci %[[C]] : vector<8xi32> to vector<8xi8>
//       CHECK: %[[EVEN:.*]] = vector.shuffle %[[T]], %[[T]] [0, 2, 4, 6]
//       CHECK: %[[ODD:.*]] = vector.shuffle %[[T]], %[[T]] [1, 3, 5, 7]
//       CHECK: %[[LOW:.*]] = arith.andi %[[EVEN]], %{{.*}} : vector<4xi8>
//       CHECK: %[[HIGH:.*]] = arith.shli %[[ODD]], %{{.*}} : vector<4xi8>
//       CHECK: %[[BYTES:.*]] = arith.ori %[[LOW]], %[[HIGH]] : vector<4xi8>
//       CHECK: vector.store %[[BYTES]], %[[M]][%{{.*}}] : memref<64xi8>, vector<4xi8>
//   CHECK-NOT: vector.bitcast
//       CHECK: vector.shuffle
//       CHECK: vector.shuffle
//       CHECK: vector.store %{{.*}}, %[[M]][%{{.*}}] : memref<64xi8>, vector<4xi8>
func.func @host_codes(%m: memref<128xf4E2M1FN>, %codes: vector<8xi32>, %i: index) {
  %t = arith.trunci %codes : vector<8xi32> to vector<8xi4>
  %v = arith.bitcast %t : vector<8xi4> to vector<8xf4E2M1FN>
  vector.transfer_write %v, %m[%i] {in_bounds = [true]} : vector<8xf4E2M1FN>, memref<128xf4E2M1FN>
  vector.store %v, %m[%i] : memref<128xf4E2M1FN>, vector<8xf4E2M1FN>
  return
}

// -----

// Scalars: a nibble of the byte; a store clears and sets it atomically.
// CHECK-LABEL: func @scalars
//  CHECK-SAME: (%[[M:.*]]: memref<8x32xi8>, %[[I:.*]]: index, %[[J:.*]]: index)
//       CHECK: %[[H:.*]] = arith.shrui %[[J]], %{{.*}} : index
//       CHECK: %[[B:.*]] = memref.load %[[M]][%[[I]], %[[H]]] : memref<8x32xi8>
//       CHECK: %[[ODD:.*]] = arith.andi %[[J]], %{{.*}} : index
//       CHECK: %[[SH:.*]] = arith.shli %[[ODD]], %{{.*}} : index
//       CHECK: %[[SH8:.*]] = arith.index_cast %[[SH]] : index to i8
//       CHECK: %[[N:.*]] = arith.shrui %[[B]], %[[SH8]] : i8
//       CHECK: %[[C:.*]] = arith.trunci %[[N]] : i8 to i4
//       CHECK: %[[V:.*]] = arith.bitcast %[[C]] : i4 to f4E2M1FN
//       CHECK: memref.atomic_rmw andi %{{.*}}, %[[M]][%[[I]], %{{.*}}] : (i8, memref<8x32xi8>) -> i8
//       CHECK: memref.atomic_rmw ori %{{.*}}, %[[M]][%[[I]], %{{.*}}] : (i8, memref<8x32xi8>) -> i8
//       CHECK: return %[[V]]
func.func @scalars(%m: memref<8x64xf4E2M1FN>, %i: index, %j: index) -> f4E2M1FN {
  %e = memref.load %m[%i, %j] : memref<8x64xf4E2M1FN>
  memref.store %e, %m[%i, %j] : memref<8x64xf4E2M1FN>
  return %e : f4E2M1FN
}

// -----

// Views, reshapes, dims, copies and globals.
// CHECK-LABEL: memref.global "private" constant @codes : memref<2xi8> = dense<[33, 67]>
// CHECK-LABEL: func @views
//  CHECK-SAME: (%[[M:.*]]: memref<8x64xi8>, %[[I:.*]]: index, %[[DYN:.*]]: memref<?x?xi8>)
//       CHECK: %[[SV:.*]] = memref.subview %[[M]][%[[I]], 16] [2, 16] [1, 1] : memref<8x64xi8> to memref<2x16xi8, strided<[64, 1], offset: ?>>
//       CHECK: %[[C:.*]] = memref.collapse_shape %[[M]] {{\[}}[0, 1]] : memref<8x64xi8> into memref<512xi8>
//       CHECK: memref.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [16, 32] : memref<512xi8> into memref<16x32xi8>
//       CHECK: %[[D:.*]] = memref.dim %[[DYN]], %{{.*}} : memref<?x?xi8>
//       CHECK: %[[D2:.*]] = arith.shli %[[D]], %{{.*}} : index
//       CHECK: memref.copy %[[M]], %{{.*}} : memref<8x64xi8> to memref<8x64xi8>
//       CHECK: memref.get_global @codes : memref<2xi8>
//       CHECK: return %[[D2]]
memref.global "private" constant @codes : memref<4xf4E2M1FN> = dense<[0.5, 1.0, 1.5, 2.0]>
func.func @views(%m: memref<8x128xf4E2M1FN>, %i: index, %dyn: memref<?x?xf4E2M1FN>) -> index {
  %sv = memref.subview %m[%i, 32] [2, 32] [1, 1] : memref<8x128xf4E2M1FN> to memref<2x32xf4E2M1FN, strided<[128, 1], offset: ?>>
  %c = memref.collapse_shape %m [[0, 1]] : memref<8x128xf4E2M1FN> into memref<1024xf4E2M1FN>
  %e = memref.expand_shape %c [[0, 1]] output_shape [16, 64] : memref<1024xf4E2M1FN> into memref<16x64xf4E2M1FN>
  %c1 = arith.constant 1 : index
  %d = memref.dim %dyn, %c1 : memref<?x?xf4E2M1FN>
  %t = memref.alloc() : memref<8x128xf4E2M1FN>
  memref.copy %m, %t : memref<8x128xf4E2M1FN> to memref<8x128xf4E2M1FN>
  %g = memref.get_global @codes : memref<4xf4E2M1FN>
  return %d : index
}

// -----

// Buffers of other element types are left alone.
// CHECK-LABEL: func @untouched
//  CHECK-SAME: (%{{.*}}: memref<8x64xf8E4M3FN>, %{{.*}}: memref<3xi4>)
func.func @untouched(%m: memref<8x64xf8E4M3FN>, %n: memref<3xi4>) {
  return
}

// -----

// Kernels: the gpu.func signature, the launch, device buffers (async or
// not) and copies. A kernel's vector store of codes truncated from i8 packs
// them with i8 shuffles (even | odd << 4, as on the host), keeping the
// store's alignment.
// CHECK-LABEL: gpu.module @kernels
//       CHECK: gpu.func @store(%[[Q:.*]]: memref<?xi8>, %[[V:.*]]: vector<8xi8>, %[[I:.*]]: index) kernel
//       CHECK:   %[[EVEN:.*]] = vector.shuffle %[[V]], %[[V]] [0, 2, 4, 6]
//       CHECK:   %[[ODD:.*]] = vector.shuffle %[[V]], %[[V]] [1, 3, 5, 7]
//       CHECK:   %[[LOW:.*]] = arith.andi %[[EVEN]], %{{.*}} : vector<4xi8>
//       CHECK:   %[[HIGH:.*]] = arith.shli %[[ODD]], %{{.*}} : vector<4xi8>
//       CHECK:   %[[BYTES:.*]] = arith.ori %[[LOW]], %[[HIGH]] : vector<4xi8>
//       CHECK:   %[[B:.*]] = arith.shrui %[[I]], %c1
//       CHECK:   vector.store %[[BYTES]], %[[Q]][%[[B]]] {alignment = 4 : i64} : memref<?xi8>, vector<4xi8>
//   CHECK-NOT:   memref.atomic_rmw
//       CHECK:   gpu.return
// CHECK-LABEL: func @launch
//  CHECK-SAME: (%[[H:.*]]: memref<?xi8>, %[[N:.*]]: index, %[[V2:.*]]: vector<8xi8>)
//       CHECK: %[[HALF:.*]] = arith.shrui %[[N]], %c1
//       CHECK: %[[D:.*]], %[[T:.*]] = gpu.alloc async [%{{.*}}] (%[[HALF]]) : memref<?xi8>
//       CHECK: gpu.launch_func  @kernels::@store {{.*}} args(%[[D]] : memref<?xi8>, %[[V2]] : vector<8xi8>, %{{.*}} : index)
//       CHECK: gpu.memcpy  %[[H]], %[[D]] : memref<?xi8>, memref<?xi8>
//       CHECK: gpu.dealloc  %[[D]] : memref<?xi8>
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @store(%q: memref<?xf4E2M1FN>, %codes: vector<8xi8>, %i: index) kernel {
      %t = arith.trunci %codes : vector<8xi8> to vector<8xi4>
      %v = arith.bitcast %t : vector<8xi4> to vector<8xf4E2M1FN>
      vector.store %v, %q[%i] {alignment = 4 : i64} : memref<?xf4E2M1FN>, vector<8xf4E2M1FN>
      gpu.return
    }
  }
  func.func @launch(%h: memref<?xf4E2M1FN>, %n: index, %codes: vector<8xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %w = gpu.wait async
    %d, %t = gpu.alloc async [%w] (%n) : memref<?xf4E2M1FN>
    gpu.wait [%t]
    gpu.launch_func @kernels::@store blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%d : memref<?xf4E2M1FN>, %codes : vector<8xi8>, %c0 : index)
    gpu.memcpy %h, %d : memref<?xf4E2M1FN>, memref<?xf4E2M1FN>
    gpu.dealloc %d : memref<?xf4E2M1FN>
    return
  }
}

// -----

// The metadata of a packed buffer in elements again (what buffer
// deallocation reads for the base pointer).
// CHECK-LABEL: func @metadata
//  CHECK-SAME: (%[[A:.*]]: memref<4x32xi8>)
//       CHECK: %[[BASE:.*]], %[[OFF:.*]], %[[SIZES:.*]]:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %[[A]] : memref<4x32xi8> -> memref<i8>, index, index, index, index, index
//       CHECK: arith.muli %[[OFF]], %c2
//       CHECK: arith.muli %[[SIZES]]#1, %c2
//       CHECK: arith.muli %[[STRIDES]]#0, %c2
//       CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[BASE]] : memref<i8> -> index
//       CHECK: return %c0, %c64, %c64{{.*}}, %[[P]]
func.func @metadata(%a: memref<4x64xf4E2M1FN>) -> (index, index, index, index) {
  %base, %off, %sizes:2, %strides:2 = memref.extract_strided_metadata %a : memref<4x64xf4E2M1FN> -> memref<f4E2M1FN>, index, index, index, index, index
  %p = memref.extract_aligned_pointer_as_index %base : memref<f4E2M1FN> -> index
  return %off, %sizes#1, %strides#0, %p : index, index, index, index
}

// -----

// A kernel with a workgroup attribution: its arguments are converted, the
// attribution (a block argument after them) is kept.
// CHECK-LABEL: gpu.module @attributions
//       CHECK: gpu.func @kernel(%[[Q:.*]]: memref<?xi8>) workgroup(%[[W:.*]] : memref<4xf32, #gpu.address_space<workgroup>>) kernel
//       CHECK:   memref.store %{{.*}}, %[[W]][%{{.*}}] : memref<4xf32, #gpu.address_space<workgroup>>
//       CHECK:   vector.store %{{.*}}, %[[Q]][%{{.*}}] : memref<?xi8>, vector<1xi8>
module attributes {gpu.container_module} {
  gpu.module @attributions {
    gpu.func @kernel(%q: memref<?xf4E2M1FN>) workgroup(%w : memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      memref.store %one, %w[%c0] : memref<4xf32, #gpu.address_space<workgroup>>
      %v = arith.constant dense<0.0> : vector<2xf4E2M1FN>
      vector.store %v, %q[%c0] : memref<?xf4E2M1FN>, vector<2xf4E2M1FN>
      gpu.return
    }
  }
}

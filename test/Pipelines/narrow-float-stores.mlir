// RUN: norm-opt %s --norm-cpu-pipeline=native-bf16=false | FileCheck %s
// RUN: norm-opt %s --norm-cpu-pipeline=native-bf16=true | FileCheck %s --check-prefix=NATIVE
// RUN: norm-opt %s --norm-store-narrow-floats-as-ints | FileCheck %s --check-prefix=PASS

// bf16 results are stored as i16 vectors: LLVM would otherwise scalarize
// the store of a bf16 vector lane by lane on x86 without native bf16.
// CHECK-LABEL: llvm.func @kernel
//   CHECK-NOT: llvm.store {{.*}} : vector<{{[0-9]+}}xbf16>
//       CHECK: llvm.store %{{.*}}, %{{.*}} {{.*}}: vector<{{[0-9]+}}xi16>, !llvm.ptr
// With native-bf16 (the default on a host with AVX-512 BF16) the
// truncation stays a vector fptrunc, which LLVM lowers to vcvtneps2bf16.
// NATIVE-LABEL: llvm.func @kernel
//       NATIVE: llvm.fptrunc %{{.*}} : vector<{{[0-9]+}}xf32> to vector<{{[0-9]+}}xbf16>
//       NATIVE: llvm.store %{{.*}}, %{{.*}} {{.*}}: vector<{{[0-9]+}}xbf16>, !llvm.ptr
func.func @kernel(%xm: memref<64x4096xbf16>, %ym: memref<64x4096xbf16>) attributes {llvm.emit_c_interface} {
  %x = bufferization.to_tensor %xm restrict : memref<64x4096xbf16> to tensor<64x4096xbf16>
  %y = norm.rms_norm %x : (tensor<64x4096xbf16>) -> tensor<64x4096xbf16>
  bufferization.materialize_in_destination %y in restrict writable %ym : (tensor<64x4096xbf16>, memref<64x4096xbf16>) -> ()
  return
}

// PASS-LABEL: llvm.func @store_bitcast
//  PASS-SAME: (%[[I:.*]]: vector<8xi16>, %[[P:.*]]: !llvm.ptr)
//       PASS: llvm.store %[[I]], %[[P]] : vector<8xi16>, !llvm.ptr
llvm.func @store_bitcast(%i: vector<8xi16>, %p: !llvm.ptr) {
  %b = llvm.bitcast %i : vector<8xi16> to vector<8xbf16>
  llvm.store %b, %p : vector<8xbf16>, !llvm.ptr
  llvm.return
}

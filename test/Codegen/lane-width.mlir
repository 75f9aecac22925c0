// RUN: dlc-cuda-translate --emit-cuda --sm 90 --split-input-file %s | FileCheck %s --check-prefix=H100
// RUN: dlc-cuda-translate --emit-cuda --sm 90 --min-lane-threads=0 --split-input-file %s | FileCheck %s --check-prefix=WIDE

// The per-element kernel's vector lanes narrow to keep at least two
// 256-thread CTAs per SM (132 SMs on sm_90: 67584 threads): a 7x7x960
// depthwise convolution at batch 1 (47040 outputs, MobileNetV2's last) runs
// a thread per element, not 5880 threads of 8 channels (23 CTAs; on the H200
// the 17 depthwise kernels of MobileNetV2 at batch 1 took 0.109 ms as
// 16-byte lanes, 0.083 ms per element). --min-lane-threads=0 keeps the
// 16-byte lanes.
// H100-LABEL: // ===== kernel k0_depthwise_conv2d family=depthwise grid=(184,1,1) block=(256,1,1)
// H100:         e < 47040;
// H100-NOT:     dlc_vec
// WIDE-LABEL: // ===== kernel k0_depthwise_conv2d family=depthwise grid=(23,1,1) block=(256,1,1)
// WIDE:         e < 5880;
// WIDE:         dlc_vec<__half, 8>
func.func @late(%x: memref<1x7x7x960xf16>, %w: memref<3x3x960x1xf16>, %y: memref<1x7x7x960xf16>) {
  exec.kernel "k0_depthwise_conv2d" ins(%x, %w : memref<1x7x7x960xf16>, memref<3x3x960x1xf16>) outs(%y : memref<1x7x7x960xf16>) {
  ^bb0(%a0: tensor<1x7x7x960xf16>, %a1: tensor<3x3x960x1xf16>):
    %0 = graph.cast %a0 : tensor<1x7x7x960xf16> -> tensor<1x7x7x960xf32>
    %1 = graph.cast %a1 : tensor<3x3x960x1xf16> -> tensor<3x3x960x1xf32>
    %2 = graph.depthwise_conv2d %0, %1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x7x7x960xf32>, tensor<3x3x960x1xf32>) -> tensor<1x7x7x960xf32>
    %3 = graph.cast %2 : tensor<1x7x7x960xf32> -> tensor<1x7x7x960xf16>
    exec.yield %3 : tensor<1x7x7x960xf16>
  }
  return
}

// -----

// 112x112x32 (401408 outputs, MobileNetV2's first): 8 channels a thread
// would be 50176 threads; 4 channels (100352) are the widest that keep
// 67584.
// H100-LABEL: // ===== kernel k1_depthwise_conv2d family=depthwise
// H100:         e < 100352;
// H100:         dlc_vec<__half, 4>
// WIDE-LABEL: // ===== kernel k1_depthwise_conv2d family=depthwise
// WIDE:         e < 50176;
// WIDE:         dlc_vec<__half, 8>
func.func @early(%x: memref<1x112x112x32xf16>, %w: memref<3x3x32x1xf16>, %y: memref<1x112x112x32xf16>) {
  exec.kernel "k1_depthwise_conv2d" ins(%x, %w : memref<1x112x112x32xf16>, memref<3x3x32x1xf16>) outs(%y : memref<1x112x112x32xf16>) {
  ^bb0(%a0: tensor<1x112x112x32xf16>, %a1: tensor<3x3x32x1xf16>):
    %0 = graph.cast %a0 : tensor<1x112x112x32xf16> -> tensor<1x112x112x32xf32>
    %1 = graph.cast %a1 : tensor<3x3x32x1xf16> -> tensor<3x3x32x1xf32>
    %2 = graph.depthwise_conv2d %0, %1 {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x112x112x32xf32>, tensor<3x3x32x1xf32>) -> tensor<1x112x112x32xf32>
    %3 = graph.cast %2 : tensor<1x112x112x32xf32> -> tensor<1x112x112x32xf16>
    exec.yield %3 : tensor<1x112x112x32xf16>
  }
  return
}

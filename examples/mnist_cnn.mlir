// The MNIST CNN of docs/keras.md in the graph dialect, as the Keras frontend
// imports it: batch dim open, weights as dense_resource blobs (elided here),
// each op located at its Keras layer. Try:
//   dlc-opt examples/mnist_cnn.mlir --dlc-specialize-batch=batch=1 --canonicalize
// and add --mlir-print-debuginfo to see the layer names.
func.func @mnist_cnn(%image: tensor<?x28x28x1xf32> loc("input_layer")) -> tensor<?x10xf32> {
  %k1 = graph.constant dense_resource<conv2d_kernel> : tensor<3x3x1x32xf32> loc("conv2d")
  %b1 = graph.constant dense_resource<conv2d_bias> : tensor<32xf32> loc("conv2d")
  %k2 = graph.constant dense_resource<conv2d_1_kernel> : tensor<3x3x32x64xf32> loc("conv2d_1")
  %b2 = graph.constant dense_resource<conv2d_1_bias> : tensor<64xf32> loc("conv2d_1")
  %k3 = graph.constant dense_resource<conv2d_2_kernel> : tensor<3x3x64x64xf32> loc("conv2d_2")
  %b3 = graph.constant dense_resource<conv2d_2_bias> : tensor<64xf32> loc("conv2d_2")
  %k4 = graph.constant dense_resource<dense_kernel> : tensor<576x64xf32> loc("dense")
  %b4 = graph.constant dense_resource<dense_bias> : tensor<64xf32> loc("dense")
  %k5 = graph.constant dense_resource<dense_1_kernel> : tensor<64x10xf32> loc("dense_1")
  %b5 = graph.constant dense_resource<dense_1_bias> : tensor<10xf32> loc("dense_1")

  %0 = graph.conv2d %image, %k1 : (tensor<?x28x28x1xf32>, tensor<3x3x1x32xf32>) -> tensor<?x26x26x32xf32> loc("conv2d")
  %1 = graph.bias_add %0, %b1 : (tensor<?x26x26x32xf32>, tensor<32xf32>) -> tensor<?x26x26x32xf32> loc("conv2d")
  %2 = graph.activation <relu> %1 : tensor<?x26x26x32xf32> loc("conv2d")
  %3 = graph.pool2d <max> %2 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x26x26x32xf32>) -> tensor<?x13x13x32xf32> loc("max_pooling2d")
  %4 = graph.conv2d %3, %k2 : (tensor<?x13x13x32xf32>, tensor<3x3x32x64xf32>) -> tensor<?x11x11x64xf32> loc("conv2d_1")
  %5 = graph.bias_add %4, %b2 : (tensor<?x11x11x64xf32>, tensor<64xf32>) -> tensor<?x11x11x64xf32> loc("conv2d_1")
  %6 = graph.activation <relu> %5 : tensor<?x11x11x64xf32> loc("conv2d_1")
  %7 = graph.pool2d <max> %6 {window = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x11x11x64xf32>) -> tensor<?x5x5x64xf32> loc("max_pooling2d_1")
  %8 = graph.conv2d %7, %k3 : (tensor<?x5x5x64xf32>, tensor<3x3x64x64xf32>) -> tensor<?x3x3x64xf32> loc("conv2d_2")
  %9 = graph.bias_add %8, %b3 : (tensor<?x3x3x64xf32>, tensor<64xf32>) -> tensor<?x3x3x64xf32> loc("conv2d_2")
  %10 = graph.activation <relu> %9 : tensor<?x3x3x64xf32> loc("conv2d_2")
  %11 = graph.reshape %10 : tensor<?x3x3x64xf32> -> tensor<?x576xf32> loc("flatten")
  %12 = graph.matmul %11, %k4 : (tensor<?x576xf32>, tensor<576x64xf32>) -> tensor<?x64xf32> loc("dense")
  %13 = graph.bias_add %12, %b4 : (tensor<?x64xf32>, tensor<64xf32>) -> tensor<?x64xf32> loc("dense")
  %14 = graph.activation <relu> %13 : tensor<?x64xf32> loc("dense")
  %15 = graph.matmul %14, %k5 : (tensor<?x64xf32>, tensor<64x10xf32>) -> tensor<?x10xf32> loc("dense_1")
  %16 = graph.bias_add %15, %b5 : (tensor<?x10xf32>, tensor<10xf32>) -> tensor<?x10xf32> loc("dense_1")
  %17 = graph.softmax %16 : tensor<?x10xf32> loc("dense_1")
  return %17 : tensor<?x10xf32>
}

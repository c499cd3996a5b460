#loc = loc(unknown)
module @jit_f attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8x128xf32> {mhlo.layout_mode = "default", tf.aliasing_output = 0 : i32}, %arg1: tensor<128x256xbf16> {mhlo.layout_mode = "default", mhlo.sharding = "{devices=[1,2]<=[2]}"}) -> (tensor<8x128xf32> {jax.result_info = "[0]"}, tensor<i32> {jax.result_info = "[1]"}) {
    %0 = stablehlo.convert %arg1 : (tensor<128x256xbf16>) -> tensor<128x256xf32> loc(#loc3)
    %1 = stablehlo.slice %0 [0:128, 0:128] : (tensor<128x256xf32>) -> tensor<128x128xf32>
    %2 = stablehlo.dot_general %arg0, %1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32> loc("jit(f)/dot_general"(#loc1))
    %c = stablehlo.constant dense<0> : tensor<i32>
    %3:2 = stablehlo.while(%iterArg = %c, %iterArg_0 = %2) : tensor<i32>, tensor<8x128xf32>
     cond {
      %c_1 = stablehlo.constant dense<3> : tensor<i32>
      %5 = stablehlo.compare  LT, %iterArg, %c_1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %5 : tensor<i1>
    } do {
      %c_1 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %iterArg, %c_1 : tensor<i32>
      %6 = stablehlo.tanh %iterArg_0 : tensor<8x128xf32>
      %7 = stablehlo.dot_general %6, %1, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
      stablehlo.return %5, %7 : tensor<i32>, tensor<8x128xf32>
    }
    %4 = call @helper(%3#1) : (tensor<8x128xf32>) -> tensor<8x128xf32>
    %5 = stablehlo.reduce(%4 init: %c) applies stablehlo.add across dimensions = [0, 1] : (tensor<8x128xf32>, tensor<i32>) -> tensor<i32>
    return %4, %3#0 : tensor<8x128xf32>, tensor<i32>
  }
  func.func private @helper(%arg0: tensor<8x128xf32>) -> tensor<8x128xf32> {
    %0 = stablehlo.exponential %arg0 : tensor<8x128xf32>
    %1 = stablehlo.transpose %0, dims = [0, 1] : (tensor<8x128xf32>) -> tensor<8x128xf32>
    %2 = "stablehlo.multiply"(%1, %0) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    return %2 : tensor<8x128xf32>
  }
}
#loc1 = loc("f.py":3:0)

#loc = loc(unknown)
module @jit_g attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<i32>, %arg1: tensor<8x128xf32>, %arg2: tensor<128x128xf32>) -> (tensor<8x128xf32> {jax.result_info = "[0]"}, tensor<i32> {jax.result_info = "[1]"}) {
    %0 = stablehlo.exponential %arg1 : tensor<8x128xf32>
    %1 = "stablehlo.case"(%arg0) ({
      %5 = stablehlo.dot_general %0, %arg2, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
      %6 = stablehlo.reverse %5, dims = [0] : tensor<8x128xf32>
      "stablehlo.return"(%6) : (tensor<8x128xf32>) -> ()
    }, {
      %5 = stablehlo.transpose %arg2, dims = [1, 0] : (tensor<128x128xf32>) -> tensor<128x128xf32>
      %6 = stablehlo.dot_general %0, %5, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
      "stablehlo.return"(%6) : (tensor<8x128xf32>) -> ()
    }, {
      "stablehlo.return"(%0) : (tensor<8x128xf32>) -> ()
    }) : (tensor<i32>) -> tensor<8x128xf32> loc("jit(g)/cond")
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2:2 = "stablehlo.while"(%c, %1) ({
    ^bb0(%a: tensor<i32>, %b: tensor<8x128xf32>):
      %c_0 = stablehlo.constant dense<3> : tensor<i32>
      %7 = stablehlo.compare  LT, %a, %c_0,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%7) : (tensor<i1>) -> ()
    }, {
    ^bb0(%a: tensor<i32>, %b: tensor<8x128xf32>):
      %c_0 = stablehlo.constant dense<1> : tensor<i32>
      %7 = stablehlo.add %a, %c_0 : tensor<i32>
      %8 = stablehlo.dot_general %b, %arg2, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
      %9 = stablehlo.dot_general %8, %arg2, contracting_dims = [1] x [0] : (tensor<8x128xf32>, tensor<128x128xf32>) -> tensor<8x128xf32>
      "stablehlo.return"(%7, %9) : (tensor<i32>, tensor<8x128xf32>) -> ()
    }) : (tensor<i32>, tensor<8x128xf32>) -> (tensor<i32>, tensor<8x128xf32>)
    return %2#1, %2#0 : tensor<8x128xf32>, tensor<i32>
  }
}

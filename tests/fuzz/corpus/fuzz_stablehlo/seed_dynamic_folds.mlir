//bind arg0=4,arg1=6x3
module @m {
  func.func @main(%arg0: tensor<i64>, %arg1: tensor<?x3xf32>) -> tensor<?x?xi32> {
    %a = stablehlo.get_dimension_size %arg1, dim = 0 : (tensor<?x3xf32>) -> tensor<i32>
    %b = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>
    %c = stablehlo.multiply %a, %b : tensor<i32>
    %k3 = stablehlo.constant dense<3> : tensor<i32>
    %d = stablehlo.subtract %c, %k3 : tensor<i32>
    %k2 = stablehlo.constant dense<2> : tensor<i32>
    %e = stablehlo.divide %d, %k2 : tensor<i32>
    %k4 = stablehlo.constant dense<4> : tensor<i32>
    %f = stablehlo.remainder %d, %k4 : tensor<i32>
    %g = stablehlo.maximum %e, %f : tensor<i32>
    %h = stablehlo.minimum %e, %f : tensor<i32>
    %p = stablehlo.compare  GT, %g, %h,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %s = stablehlo.select %p, %g, %h : tensor<i1>, tensor<i32>
    %r1 = stablehlo.reshape %s : (tensor<i32>) -> tensor<1xi32>
    %r2 = stablehlo.reshape %h : (tensor<i32>) -> tensor<1xi32>
    %k7 = stablehlo.constant dense<[7]> : tensor<1xi32>
    %cat = stablehlo.concatenate %r1, %r2, %k7, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<3xi32>
    %sl = stablehlo.slice %cat [0:3:2] : (tensor<3xi32>) -> tensor<2xi32>
    %i = stablehlo.dynamic_iota %sl, dim = 0 : (tensor<2xi32>) -> tensor<?x?xi32>
    return %i : tensor<?x?xi32>
  }
}

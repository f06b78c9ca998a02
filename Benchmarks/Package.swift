// swift-tools-version: 6.1
// The ChainBind benchmarks: a separate package, so that benchmark dependencies never reach
// ChainBind's clients. Run from this folder: `swift package --disable-sandbox benchmark`.
import PackageDescription

let package = Package(
  name: "ChainBindBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "ChainBind", path: ".."),
    .package(
      url: "https://github.com/ordo-one/benchmark", exact: "1.38.1",
      traits: ["MallocInterposer"]),
    .package(url: "https://github.com/OpenCombine/OpenCombine", exact: "0.14.0"),
  ],
  targets: [
    .executableTarget(
      name: "ChainBindBenchmarks",
      dependencies: [
        .product(name: "ChainBind", package: "ChainBind"),
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "OpenCombine", package: "OpenCombine"),
      ],
      path: "Benchmarks/ChainBindBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
  ],
  swiftLanguageModes: [.v6]
)

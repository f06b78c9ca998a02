// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "ChainBind",
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "ChainBind", targets: ["ChainBind"]),
    .executable(name: "LotteryDemo", targets: ["LotteryDemo"]),
  ],
  targets: [
    .target(name: "ChainBind", dependencies: ["ChainBindThreadLocal"]),
    // Each thread's own pointers, as C thread-local variables (Platform.swift): a header only.
    .systemLibrary(name: "ChainBindThreadLocal"),
    .executableTarget(name: "LotteryDemo", dependencies: ["ChainBind"]),
    .testTarget(name: "ChainBindTests", dependencies: ["ChainBind"]),
    .testTarget(name: "LotteryDemoTests", dependencies: ["LotteryDemo", "ChainBind"]),
  ],
  swiftLanguageModes: [.v6]
)

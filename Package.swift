// swift-tools-version: 6.0
import PackageDescription

let package = Package(
  name: "ChainBind",
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "ChainBind", targets: ["ChainBind"])
  ],
  targets: [
    .target(name: "ChainBind"),
    .testTarget(name: "ChainBindTests", dependencies: ["ChainBind"]),
  ],
  swiftLanguageModes: [.v6]
)

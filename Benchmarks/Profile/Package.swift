// swift-tools-version: 6.0
// Harness-free loops of the benchmark scenarios, to run under valgrind (`../profile.sh`). A package
// of its own, with no dependency but ChainBind, so that it builds in seconds and offline.
import PackageDescription

let package = Package(
  name: "ChainBindProfile",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "ChainBind", path: "../..")
  ],
  targets: [
    .executableTarget(
      name: "HotPathProfile",
      dependencies: [.product(name: "ChainBind", package: "ChainBind"), "MallocStats"]
    ),
    // The heap's bytes in use, for the soak mode (`mallinfo2` is not in Swift's Glibc module).
    // DWARF 4: clang's default, DWARF 5, is more than valgrind 3.19 can read, and it then gives
    // up on the whole executable (`check-hotpath.sh`).
    .target(name: "MallocStats", cSettings: [.unsafeFlags(["-gdwarf-4"])]),
  ],
  swiftLanguageModes: [.v6]
)

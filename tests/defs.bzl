"""A test that starts the real iofleet and iofleet-worker binaries."""

def iofleet_process_test(name, srcs, deps = [], data = [], size = "medium", tags = []):
    """A cc_test with both binaries in its runfiles and the process helpers linked in.

    Args:
      name: the test's name.
      srcs: its sources.
      deps: further dependencies.
      size: Bazel test size.
      data: further runtime files.
      tags: e.g. ["local", "exclusive"] for tests that mount or make network namespaces.
    """
    native.cc_test(
        name = name,
        size = size,
        srcs = srcs,
        data = data + [
            "//controller:iofleet",
            "//worker:iofleet-worker",
        ],
        tags = tags,
        deps = deps + [
            ":test_process",
            "//third_party/system:absl",
            "//third_party/system:gtest_main",
            "//third_party/system:protobuf",
        ],
    )

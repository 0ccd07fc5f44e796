"""Generates C++ protobuf and gRPC code with the system protoc (Debian's), fully offline.

protoc and grpc_cpp_plugin are the declared tools of @system (tools/system_repository.bzl)."""

def iofleet_proto_library(name, src, deps = [], grpc = False):
    """A cc_library named `name` built from one .proto file.

    Args:
      name: the cc_library's name.
      src: the .proto file, in this package.
      deps: other iofleet_proto_library targets whose .proto files `src` imports.
      grpc: whether to also generate the gRPC service stubs.
    """
    base = src[:-len(".proto")]
    outs = [base + ".pb.h", base + ".pb.cc"]
    cmd = "$(location @system//:protoc) --proto_path=. --cpp_out=$(GENDIR) "
    tools = ["@system//:protoc"]
    if grpc:
        outs += [base + ".grpc.pb.h", base + ".grpc.pb.cc"]
        cmd += "--grpc_out=$(GENDIR) --plugin=protoc-gen-grpc=$(location @system//:grpc_cpp_plugin) "
        tools.append("@system//:grpc_cpp_plugin")
    native.genrule(
        name = name + "_gen",
        srcs = [src] + [d + "_srcs" for d in deps],
        outs = outs,
        tools = tools,
        cmd = cmd + "$(location " + src + ")",
    )
    native.filegroup(
        name = name + "_srcs",
        srcs = [src] + [d + "_srcs" for d in deps],
    )
    native.cc_library(
        name = name,
        srcs = [o for o in outs if o.endswith(".cc")],
        hdrs = [o for o in outs if o.endswith(".h")],
        deps = deps + ["//third_party/system:protobuf"] + (["//third_party/system:grpc"] if grpc else []),
    )

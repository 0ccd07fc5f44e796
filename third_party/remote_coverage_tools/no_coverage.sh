#!/bin/sh
echo "bazel coverage is disabled offline; use gcov/lcov directly" >&2
exit 1

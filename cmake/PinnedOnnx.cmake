# The upstream ONNX C++ libraries (onnx, onnx_proto) the toolchain, the ONNXIFI
# backend and the ONNX-import fuzzer link: the release named in
# scripts/onnx-version, built by scripts/build-onnx.sh (run by
# scripts/setup.sh) into a cache outside the clone. Debian's libonnx-dev stays
# installed for python3-onnx and libonnxifi, but its C++ library is not used:
# it predates the opsets current exporters write.
#
# Defines the imported targets `onnx` and `onnx_proto` (ONNX_ML, namespace
# `onnx`) for the whole tree, OAAXVK_ONNX_VERSION and OAAXVK_ONNX_PYTHON. Configuring fails when
# the cache install is missing or incomplete.
file(STRINGS ${PROJECT_SOURCE_DIR}/scripts/onnx-version OAAXVK_ONNX_VERSION LIMIT_COUNT 1)
string(STRIP "${OAAXVK_ONNX_VERSION}" OAAXVK_ONNX_VERSION)
if(DEFINED ENV{OAAXVK_DEPS_DIR} AND NOT "$ENV{OAAXVK_DEPS_DIR}" STREQUAL "")
  set(_oaaxvk_deps_default "$ENV{OAAXVK_DEPS_DIR}")
else()
  set(_oaaxvk_deps_default "$ENV{HOME}/.cache/oaax-vulkan/deps")
endif()
set(OAAXVK_DEPS_DIR "${_oaaxvk_deps_default}" CACHE PATH
    "Where scripts/setup.sh installs the pinned third-party builds (env OAAXVK_DEPS_DIR)")
set(OAAXVK_ONNX_PREFIX "${OAAXVK_DEPS_DIR}/onnx-${OAAXVK_ONNX_VERSION}")
# The Python with the same ONNX release (scripts/python-env.sh), for the tests
# that build models of opsets newer than Debian's python3-onnx knows; those
# tests skip with a message when it is missing.
set(OAAXVK_ONNX_PYTHON "${OAAXVK_DEPS_DIR}/python-onnx-${OAAXVK_ONNX_VERSION}/bin/python3" CACHE FILEPATH
    "Python with onnx==${OAAXVK_ONNX_VERSION} and numpy (scripts/python-env.sh)")

# scripts/build-onnx.sh writes this stamp last: its presence means a complete install.
if(NOT EXISTS "${OAAXVK_ONNX_PREFIX}/.oaaxvk-complete")
  message(FATAL_ERROR
    "ONNX ${OAAXVK_ONNX_VERSION} is not built: ${OAAXVK_ONNX_PREFIX} is missing or incomplete. "
    "Run scripts/setup.sh (it builds the pinned ONNX into ${OAAXVK_DEPS_DIR}), or set "
    "OAAXVK_DEPS_DIR / -DOAAXVK_DEPS_DIR to where it was built, then configure again.")
endif()

# onnx_proto links the system protobuf; its imported target must exist here.
find_package(Protobuf REQUIRED)
# A build directory configured against another ONNX caches its ONNX_DIR; the
# search below must only see the pinned install. The subdirectories'
# find_package(ONNX) calls then reuse the ONNX_DIR this one caches.
unset(ONNX_DIR CACHE)
find_package(ONNX ${OAAXVK_ONNX_VERSION} EXACT REQUIRED CONFIG PATHS "${OAAXVK_ONNX_PREFIX}" NO_DEFAULT_PATH)
message(STATUS "ONNX ${OAAXVK_ONNX_VERSION}: ${OAAXVK_ONNX_PREFIX}")

# The exported targets carry no include directory; without one the compiler
# would find Debian's older headers in /usr/include/onnx. As an imported
# target's directory it is passed with -isystem, which is searched before
# /usr/include. Only the ONNXIFI C ABI headers (onnx/onnxifi*.h, which
# upstream no longer ships) still come from /usr/include.
foreach(_t ONNX::onnx ONNX::onnx_proto)
  set_property(TARGET ${_t} APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES "${OAAXVK_ONNX_PREFIX}/include")
endforeach()
# The names the build scripts link by (Debian's package exports them unqualified).
add_library(onnx ALIAS ONNX::onnx)
add_library(onnx_proto ALIAS ONNX::onnx_proto)

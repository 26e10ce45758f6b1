# What this build targets, said once at configure time, and the
# combinations it refuses with the requirement and the fix, rather than a
# compiler error deep in the build.
include(CheckCXXSourceCompiles)
include(CheckIncludeFileCXX)

# C++20: the parts mcl uses, from the compiler and its standard library.
check_cxx_source_compiles([[
#include <bit>
#include <cstdint>
#include <span>
#include <string>
#include <vector>
struct P { int a; int b; };
int main() {
  std::vector<int> v{1, 2, 3};
  std::erase_if(v, [](int x) { return x == 2; });
  std::span<const int> s(v);
  P p{.a = 1, .b = 2};
  const bool little = std::endian::native == std::endian::little;
  return std::bit_cast<uint32_t>(1.0f) == 0 || !std::string("ab").starts_with("a") ||
         s.size() != 2 || p.b != 2 || !little;
}]] MCL_HAVE_CXX20)
if(NOT MCL_HAVE_CXX20)
  message(FATAL_ERROR "mcl needs C++20 (std::span, std::bit_cast, "
    "designated initializers) from the compiler and its standard library; "
    "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION} "
    "(${CMAKE_CXX_COMPILER}) does not provide it. Use GCC 11+, clang 14+ "
    "or Apple clang 15+ (Xcode 15+): CXX=<compiler> cmake ...")
endif()

if(APPLE)
  # os_sync_wait_on_address (the shared-memory wait) is macOS 14.4's.
  set(MCL_MACOS_MINIMUM 14.4)
  if(CMAKE_OSX_DEPLOYMENT_TARGET VERSION_LESS MCL_MACOS_MINIMUM)
    message(FATAL_ERROR "CMAKE_OSX_DEPLOYMENT_TARGET is "
      "${CMAKE_OSX_DEPLOYMENT_TARGET}: mcl needs macOS ${MCL_MACOS_MINIMUM} "
      "or later (os_sync_wait_on_address). Configure with "
      "-DCMAKE_OSX_DEPLOYMENT_TARGET=${MCL_MACOS_MINIMUM} or later.")
  endif()
  if(NOT CMAKE_CROSSCOMPILING)
    execute_process(COMMAND sw_vers -productVersion
      OUTPUT_VARIABLE _mcl_host_macos OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET)
    if(_mcl_host_macos AND _mcl_host_macos VERSION_LESS CMAKE_OSX_DEPLOYMENT_TARGET)
      message(FATAL_ERROR "This Mac runs macOS ${_mcl_host_macos}, older "
        "than the deployment target ${CMAKE_OSX_DEPLOYMENT_TARGET}: what is "
        "built here could not run here. mcl needs macOS "
        "${MCL_MACOS_MINIMUM} or later; on this Mac, update macOS.")
    endif()
  endif()
  set(_mcl_sdk "${CMAKE_OSX_SYSROOT}")
  if(NOT _mcl_sdk)
    set(_mcl_sdk "the compiler's default")
  endif()
  check_include_file_cxx(os/os_sync_wait_on_address.h MCL_HAVE_OS_SYNC_WAIT)
  if(NOT MCL_HAVE_OS_SYNC_WAIT)
    message(FATAL_ERROR "The macOS SDK (${_mcl_sdk}) has no "
      "<os/os_sync_wait_on_address.h>: mcl needs the macOS 14.4 SDK or "
      "later. Update Xcode or the Command Line Tools "
      "(xcode-select --install), or name a newer SDK with "
      "-DCMAKE_OSX_SYSROOT=<path>.")
  endif()
  message(STATUS "macOS: SDK ${_mcl_sdk}, deployment target "
    "${CMAKE_OSX_DEPLOYMENT_TARGET}, ${CMAKE_SYSTEM_PROCESSOR}, "
    "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}")
endif()

# RDMA: the verbs header decides whether the ibverbs provider is built; the
# library itself is loaded at run time (dlopen), so mcl runs without it.
# AUTO builds it when the header is there; ON insists.
set(MCL_RDMA AUTO CACHE STRING "Build the RDMA verbs provider (AUTO, ON, OFF)")
set_property(CACHE MCL_RDMA PROPERTY STRINGS AUTO ON OFF)
if(NOT MCL_RDMA MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "MCL_RDMA is '${MCL_RDMA}': use AUTO, ON or OFF")
endif()
set(MCL_HAVE_VERBS OFF)
if(MCL_RDMA STREQUAL "OFF")
  set(_mcl_rdma_why "MCL_RDMA=OFF")
else()
  check_include_file_cxx(infiniband/verbs.h MCL_VERBS_HEADER)
  if(MCL_VERBS_HEADER)
    set(MCL_HAVE_VERBS ON)
    if(APPLE)
      set(_mcl_rdma_why "the SDK has <infiniband/verbs.h> (librdma.dylib is \
loaded at run time: macOS 26.2+ with RDMA enabled)")
    else()
      set(_mcl_rdma_why "<infiniband/verbs.h> is there (libibverbs.so.1 is \
loaded at run time)")
    endif()
  elseif(APPLE)
    set(_mcl_rdma_why "the SDK (${_mcl_sdk}) has no <infiniband/verbs.h>, \
which the macOS 26.2 SDK (Xcode 26.2) and later have")
  else()
    set(_mcl_rdma_why "there is no <infiniband/verbs.h> (install \
libibverbs-dev on Debian/Ubuntu, rdma-core-devel on Fedora/RHEL)")
  endif()
  if(MCL_RDMA STREQUAL "ON" AND NOT MCL_HAVE_VERBS)
    message(FATAL_ERROR "MCL_RDMA=ON, but ${_mcl_rdma_why}. Or configure "
      "with -DMCL_RDMA=AUTO to build without RDMA.")
  endif()
endif()
if(MCL_HAVE_VERBS)
  message(STATUS "RDMA: yes, because ${_mcl_rdma_why}")
else()
  message(STATUS "RDMA: no, because ${_mcl_rdma_why} (the emulated fabric "
    "for tests is always built)")
endif()

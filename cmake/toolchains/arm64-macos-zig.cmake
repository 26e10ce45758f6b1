# Compiles and links mcl for arm64 macOS on a Linux machine, with Zig's
# clang (LLVM 16), its macOS 13 libc headers and LLVM libc++ (the standard
# library Apple ships); scripts/check-macos.sh drives it. Nothing it builds
# can run here: it proves that every source compiles, with the project's
# warnings as errors, and that libmcl.dylib, mcl-perf and the tests link
# against what macOS provides.
#   MCLBUILD_ZIG=/path/to/zig cmake -S . -B build-macos \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/arm64-macos-zig.cmake \
#     -DMCL_MACOS_DEPS=<prefix of the dependencies built for macOS>
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR arm64)
set(CMAKE_OSX_ARCHITECTURES arm64)
set(CMAKE_OSX_DEPLOYMENT_TARGET 14.4 CACHE STRING "Oldest macOS to run on")
# No SDK directory: the driver names every system directory itself.
set(CMAKE_OSX_SYSROOT "" CACHE PATH "" FORCE)

set(_zig_bin ${CMAKE_CURRENT_LIST_DIR}/zig-macos)
set(CMAKE_C_COMPILER ${_zig_bin}/cc)
set(CMAKE_CXX_COMPILER ${_zig_bin}/c++)
set(CMAKE_AR ${_zig_bin}/ar CACHE FILEPATH "")
set(CMAKE_RANLIB ${_zig_bin}/ranlib CACHE FILEPATH "")
# zig-macos/zig-driver.sh runs the zig named by MCLBUILD_ZIG: it must be in
# the environment of the configure and of the build (check-macos.sh sets it).
if(NOT DEFINED ENV{MCLBUILD_ZIG})
  message(FATAL_ERROR "MCLBUILD_ZIG must name a zig 0.11 executable "
    "(scripts/check-macos.sh fetches one)")
endif()

# Dependencies come from the macOS prefix only, never from the build
# machine's /usr: its headers and libraries are Linux's.
# try_compile reads this file again in the same process: hand it the prefix.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES MCL_MACOS_DEPS)
set(CMAKE_FIND_ROOT_PATH ${MCL_MACOS_DEPS})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} ${MCL_MACOS_DEPS}/lib/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

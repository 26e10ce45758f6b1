# Cross-builds mcl for 64-bit Arm Linux (Apple silicon is arm64, so this
# compiles and runs the NEON paths of the kernels on an x86-64 machine):
#   cmake -S . -B build-aarch64 \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
# Compiler: Debian's g++-aarch64-linux-gnu, whose glibc and libstdc++ live in
# /usr/aarch64-linux-gnu. Libraries: Debian multiarch (libsodium-dev:arm64,
# libgtest-dev:arm64 after `dpkg --add-architecture arm64`), which install to
# /usr/lib/aarch64-linux-gnu beside the host's. Programs built here run under
# qemu-user (CMAKE_CROSSCOMPILING_EMULATOR below, used by CTest and by
# gtest_discover_tests). scripts/cross-aarch64.sh installs all of it.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(MCL_CROSS_TRIPLET aarch64-linux-gnu)
set(MCL_CROSS_SYSROOT /usr/${MCL_CROSS_TRIPLET})

set(CMAKE_C_COMPILER ${MCL_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${MCL_CROSS_TRIPLET}-g++)
# Multiarch: find_package and find_library look in lib/aarch64-linux-gnu,
# never in the host's lib/x86_64-linux-gnu. No CMAKE_FIND_ROOT_PATH: the
# arm64 packages are in the real /usr, not under a sysroot.
set(CMAKE_LIBRARY_ARCHITECTURE ${MCL_CROSS_TRIPLET})

# pkg-config (libsodium, hwloc) must read the arm64 .pc files only: the
# host's would hand x86-64 libraries to the linker. Without the arm64
# hwloc package, hwloc is then simply not found (it is optional).
set(ENV{PKG_CONFIG_LIBDIR}
    /usr/lib/${MCL_CROSS_TRIPLET}/pkgconfig:/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "")

# qemu-user runs the binaries. -L: the toolchain's ld.so and libraries come
# from the cross sysroot. LD_LIBRARY_PATH: libsodium23:arm64 brings in
# libc6:arm64, whose libc.so.6 in /lib/aarch64-linux-gnu ld.so would find
# before the sysroot's; the binary must run on the glibc it was linked with,
# and with the ld.so of that same glibc build.
find_program(MCL_QEMU_AARCH64 NAMES qemu-aarch64 qemu-aarch64-static
             NO_CMAKE_FIND_ROOT_PATH)
if(MCL_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR
      ${MCL_QEMU_AARCH64} -L ${MCL_CROSS_SYSROOT}
      -E LD_LIBRARY_PATH=${MCL_CROSS_SYSROOT}/lib)
endif()

# Installs the header, both libraries, a CMake package (find_package(mcl)
# gives mcl::mcl and mcl::mcl_static) and a pkg-config file (mcl.pc).
include(CMakePackageConfigHelpers)

install(TARGETS mcl mcl_static EXPORT mclTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/mcl
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT mclTargets NAMESPACE mcl::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mcl)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/mclConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mclConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mcl)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mclConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mclConfig.cmake
  ${PROJECT_BINARY_DIR}/mclConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/mcl)

# The prefix is found from the .pc file's own place, so the package works
# wherever `cmake --install --prefix` put it.
file(RELATIVE_PATH MCL_PC_TO_PREFIX
  "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${PROJECT_SOURCE_DIR}/cmake/mcl.pc.in
  ${PROJECT_BINARY_DIR}/mcl.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mcl.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(TARGET mcl-perf)
  install(TARGETS mcl-perf RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  # nccl-tests' program names, as links to mcl-perf (which reads the name it
  # was started under): all_reduce_perf -b 8 -e 128M -f 2 works as typed.
  foreach(name ${MCL_NCCL_TESTS_NAMES})
    install(CODE "execute_process(COMMAND \${CMAKE_COMMAND} -E create_symlink
      mcl-perf \$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}/${name})")
  endforeach()
endif()

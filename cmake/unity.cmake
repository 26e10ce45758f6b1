# Unity builds (CMAKE_UNITY_BUILD=ON: CI's compile-only, second-compiler and
# sanitizer builds, and pip's) compile batches of sources as one file, about
# half the time. A batch hides what one file forgot to include when another
# file of the batch included it; the per-file builds (README's, clang-tidy's
# include check) catch that for code every platform compiles.
# Code one platform alone compiles (under __APPLE__, __aarch64__, ...) has
# no such second build: each file with such a branch is compiled on its own.
# The same holds for a file that includes the verbs header (its forms differ
# among SDKs: scripts/check-macos.sh compiles those files against each).
set(_mcl_platform_branch
  "^[ \t]*#[ \t]*((if|elif|ifdef|ifndef).*(__APPLE__|__MACH__|__linux__|__aarch64__|__ARM_NEON|__x86_64__|__AVX|MCL_HAVE_)|include[ \t]*<infiniband/)")

# mcl_unity_platform_files_alone(DIRECTORY): for every target defined in
# DIRECTORY and below it.
function(mcl_unity_platform_files_alone directory)
  get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
      continue()
    endif()
    get_target_property(source_dir ${target} SOURCE_DIR)
    get_target_property(sources ${target} SOURCES)
    foreach(source IN LISTS sources)
      if(NOT source MATCHES "\\.(cpp|cc|c)$")
        continue()
      endif()
      if(NOT IS_ABSOLUTE ${source})
        set(source ${source_dir}/${source})
      endif()
      file(STRINGS ${source} branch REGEX "${_mcl_platform_branch}" LIMIT_COUNT 1)
      if(branch)
        set_source_files_properties(${source} TARGET_DIRECTORY ${target}
          PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
      endif()
    endforeach()
  endforeach()
  get_property(children DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
  foreach(child IN LISTS children)
    mcl_unity_platform_files_alone(${child})
  endforeach()
endfunction()

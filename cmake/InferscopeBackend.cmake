# inferscope_add_backend(<name> LABEL <label> ENTRY <plugin.cpp> LIBRARIES <targets>...
#                        [COMPONENT <install component>] [TEST_ONLY OUTPUT_DIRECTORY <dir>])
# Builds the compute backend plug-in libinferscope_<name>.so, which the engine's registry
# finds and loads at run time (engine/backend/backend_registry.h): ENTRY is the file exporting
# inferscope_backend_plugin, LIBRARIES the backend's ops, device code and kernels (linking
# inferscope_engine). Only the entry point is exported: the engine copy inside stays private.
# A backend is a folder engine/backend/<name>/ whose CMakeLists.txt calls this (engine/ adds
# every such folder; kernels/ every kernels/<name>/ folder, tests/ every tests/<name>/ one);
# its folders decide themselves whether their toolchain is there. Nothing else is edited.
# The library goes to the build tree's backends/ folder and is installed to lib/inferscope,
# and the registry names the backend with LABEL even where its library cannot load. TEST_ONLY
# builds it into OUTPUT_DIRECTORY instead, unnamed and not installed (the registry finds it
# only when INFERSCOPE_BACKEND_DIR points there).
function(inferscope_add_backend name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "TEST_ONLY" "LABEL;ENTRY;OUTPUT_DIRECTORY;COMPONENT" "LIBRARIES")
  if(NOT name MATCHES "^[a-z0-9_]+$" OR name STREQUAL "cpu")
    message(FATAL_ERROR "inferscope_add_backend: '${name}' is not a backend name ([a-z0-9_]+, not cpu)")
  endif()
  if(NOT arg_LABEL OR NOT arg_ENTRY)
    message(FATAL_ERROR "inferscope_add_backend(${name}): LABEL and ENTRY are required")
  endif()
  set(target inferscope_${name})
  add_library(${target} MODULE ${arg_ENTRY})
  target_link_libraries(${target} PRIVATE ${arg_LIBRARIES})
  set_target_properties(${target} PROPERTIES CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL)
  if(arg_TEST_ONLY)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${arg_OUTPUT_DIRECTORY})
    return()
  endif()
  set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${INFERSCOPE_BACKEND_BUILD_DIR})
  if(arg_COMPONENT)
    install(TARGETS ${target} LIBRARY DESTINATION lib/inferscope COMPONENT ${arg_COMPONENT})
  else()
    install(TARGETS ${target} LIBRARY DESTINATION lib/inferscope)
  endif()
  set_property(GLOBAL APPEND PROPERTY INFERSCOPE_CONFIGURED_BACKENDS "${name}:${arg_LABEL}")
endfunction()

# The folders under `parent` that hold a CMakeLists.txt, in `out`.
function(inferscope_backend_folders parent out)
  file(GLOB lists CONFIGURE_DEPENDS ${parent}/*/CMakeLists.txt)
  set(dirs "")
  foreach(list IN LISTS lists)
    get_filename_component(dir ${list} DIRECTORY)
    list(APPEND dirs ${dir})
  endforeach()
  set(${out} ${dirs} PARENT_SCOPE)
endfunction()

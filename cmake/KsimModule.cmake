# ksim's modules (docs/DESIGN.md, "Modules"): each folder of core/, sim/ and viz/ is one static
# library, and a module may include the headers of the modules it names, and no others.
#
#   ksim_module(PUBLIC core/base core/env PRIVATE core/config [LIBS_PUBLIC ...] [LIBS_PRIVATE ...])
#
# called from the module's own CMakeLists.txt, makes the library ksim_<folder with '/' as '_'>
# (core/storage -> ksim_core_storage) from the folder's *.cc files. PUBLIC names the modules the
# module's headers include, PRIVATE those only its .cc files include (scripts/check_modules.py
# checks both lists against the includes, and that the graph has no cycle).
#
# What makes a forbidden include fail to compile: no target has the source tree on its include
# path. Each module gets an include root of its own, build/modules/<target>/, holding a single
# symbolic link, <folder> -> the folder in the source tree, so that `#include "core/storage/log.h"`
# resolves only where ksim_core_storage is linked (directly, or through a module whose headers
# include it, which links it PUBLIC). A header of an unlinked module is "No such file".

# The library target of a module folder: core/clients/producer -> ksim_core_clients_producer.
function(ksim_module_target folder out)
  string(REPLACE "/" "_" name "${folder}")
  set(${out} "ksim_${name}" PARENT_SCOPE)
endfunction()

# Adds `folder` (relative to the source tree) to `target`'s include path, PUBLIC or PRIVATE,
# through an include root that exposes that folder alone.
function(ksim_expose_folder target scope folder)
  string(REPLACE "/" "_" name "${folder}")
  set(root "${PROJECT_BINARY_DIR}/modules/${name}")
  set(link "${root}/${folder}")
  if(NOT IS_SYMLINK "${link}")
    get_filename_component(parent "${link}" DIRECTORY)
    file(MAKE_DIRECTORY "${parent}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${folder}" "${link}" SYMBOLIC)
  endif()
  target_include_directories(${target} ${scope} "${root}")
endfunction()

function(ksim_module)
  cmake_parse_arguments(ARG "" "" "PUBLIC;PRIVATE;LIBS_PUBLIC;LIBS_PRIVATE" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "ksim_module: unexpected arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  file(RELATIVE_PATH folder "${PROJECT_SOURCE_DIR}" "${CMAKE_CURRENT_SOURCE_DIR}")
  ksim_module_target("${folder}" target)
  file(GLOB sources CONFIGURE_DEPENDS "${CMAKE_CURRENT_SOURCE_DIR}/*.cc")
  if(NOT sources)
    message(FATAL_ERROR "ksim_module: ${folder} has no .cc file")
  endif()
  add_library(${target} STATIC ${sources})
  ksim_expose_folder(${target} PUBLIC "${folder}")
  foreach(scope PUBLIC PRIVATE)
    foreach(dependency ${ARG_${scope}})
      ksim_module_target("${dependency}" dependency_target)
      target_link_libraries(${target} ${scope} ${dependency_target})
    endforeach()
    if(ARG_LIBS_${scope})
      target_link_libraries(${target} ${scope} ${ARG_LIBS_${scope}})
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY KSIM_MODULES "${folder}")
endfunction()

# An executable or a test-support library outside the module tree (tools/, bench/, fuzz/,
# tests/) that links modules: `ksim_link_modules(target PRIVATE core/storage sim/world)`.
function(ksim_link_modules target scope)
  foreach(folder ${ARGN})
    ksim_module_target("${folder}" dependency_target)
    target_link_libraries(${target} ${scope} ${dependency_target})
  endforeach()
endfunction()

# After every module is added: each named dependency must be a module (a misspelt folder would
# otherwise become a plain `-lksim_...` and fail only at link time, obscurely).
function(ksim_check_module_dependencies)
  get_property(modules GLOBAL PROPERTY KSIM_MODULES)
  foreach(folder ${modules})
    ksim_module_target("${folder}" target)
    get_target_property(links ${target} LINK_LIBRARIES)
    foreach(link ${links})
      if(link MATCHES "^ksim_" AND NOT TARGET ${link})
        message(FATAL_ERROR "${folder}/CMakeLists.txt names ${link}, which is not a module")
      endif()
    endforeach()
  endforeach()
endfunction()

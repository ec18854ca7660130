# cstatic_add_model(<name> <model.onnx>
#                   [TARGET "<target string>"]   default "c_static_lib"
#                   [WEIGHTS c|bin]              default c
#                   [OUTPUT_DIR <dir>])          default <binary dir>/<name>
#
# Compiles the model with `cstatic compile` and adds a static library
# <name> of the generated C, linked with cstatic::runtime, whose users
# include "lib0.h" and call model_run() (or cg_main()).
#
# WEIGHTS c (the default) compiles the weights into the library
# (model_run(NULL, arena, in, out)); WEIGHTS bin leaves them in
# <OUTPUT_DIR>/weights.bin for the program to load and pass.
#
# When: the model is compiled while CMake configures (the number of lib*.c
# files is known only then), and again whenever the model file, the target
# string or the cstatic binary changed: they are configure dependencies, so
# a `cmake --build` after a change re-runs CMake first. The generated
# directory and the library's properties CSTATIC_MODEL_DIR and
# CSTATIC_MODEL_WEIGHTS (weights.bin, or empty) say where the files are.
function(cstatic_add_model name model)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "TARGET;WEIGHTS;OUTPUT_DIR" "")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cstatic_add_model(${name}): unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT ARG_TARGET)
    set(ARG_TARGET "c_static_lib")
  endif()
  if(NOT ARG_WEIGHTS)
    set(ARG_WEIGHTS c)
  endif()
  if(NOT ARG_WEIGHTS MATCHES "^(c|bin)$")
    message(FATAL_ERROR "cstatic_add_model(${name}): WEIGHTS must be c or bin, not '${ARG_WEIGHTS}'")
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/${name}")
  endif()
  get_filename_component(model "${model}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "cstatic_add_model(${name}): model ${model} does not exist")
  endif()
  if(NOT EXISTS "${CSTATIC_EXECUTABLE}")
    message(FATAL_ERROR "cstatic_add_model(${name}): the cstatic CLI ${CSTATIC_EXECUTABLE} does not exist "
                        "(set CSTATIC_EXECUTABLE)")
  endif()

  # Recompile only when something it depends on changed: the stamp holds
  # the command, and is older than the model or the CLI after a change.
  set(cmd "${CSTATIC_EXECUTABLE}" compile "${model}" -o "${ARG_OUTPUT_DIR}" -t "${ARG_TARGET}"
          "--weights=${ARG_WEIGHTS}" -q)
  set(stamp "${ARG_OUTPUT_DIR}.cstatic-stamp")
  set(old_cmd "")
  if(EXISTS "${stamp}")
    file(READ "${stamp}" old_cmd)
  endif()
  if(NOT old_cmd STREQUAL "${cmd}" OR NOT EXISTS "${ARG_OUTPUT_DIR}/lib0.c"
     OR "${model}" IS_NEWER_THAN "${stamp}" OR "${CSTATIC_EXECUTABLE}" IS_NEWER_THAN "${stamp}")
    message(STATUS "cstatic: compiling ${model} (${ARG_TARGET})")
    execute_process(COMMAND ${cmd} RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
    if(NOT rc EQUAL 0)
      string(STRIP "${err}" err)
      message(FATAL_ERROR "cstatic_add_model(${name}): ${err}")
    endif()
    file(WRITE "${stamp}" "${cmd}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${model}" "${CSTATIC_EXECUTABLE}")

  file(GLOB sources "${ARG_OUTPUT_DIR}/lib*.c")
  set(weights_file "")
  if(ARG_WEIGHTS STREQUAL "c")
    list(APPEND sources "${ARG_OUTPUT_DIR}/weights.c")
  else()
    set(weights_file "${ARG_OUTPUT_DIR}/weights.bin")
  endif()
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC "${ARG_OUTPUT_DIR}")
  target_link_libraries(${name} PUBLIC cstatic::runtime)
  set_target_properties(${name} PROPERTIES
    CSTATIC_MODEL_DIR "${ARG_OUTPUT_DIR}"
    CSTATIC_MODEL_WEIGHTS "${weights_file}")
endfunction()

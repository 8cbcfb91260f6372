# The Python extension module ndx._ndx (python/src/*.c), linked with libndx's own objects: the
# same compile flags, per-file flags included, as the C library. python/setup.py configures a
# build with NDX_BUILD_PYTHON=ON and Python3_EXECUTABLE set to the Python pip runs, builds the
# target ndx_python and copies the module into the package it builds.
# Included by the top-level CMakeLists.txt after ndx_objects exists.
option(NDX_BUILD_PYTHON "Build the Python extension module ndx._ndx (python/setup.py sets it)" OFF)
if(NOT NDX_BUILD_PYTHON)
  return()
endif()

find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module)
# NumPy's C headers, from the NumPy of the Python that will import the module.
execute_process(COMMAND ${Python3_EXECUTABLE} -c "import numpy; print(numpy.get_include())"
  OUTPUT_VARIABLE NDX_NUMPY_INCLUDE OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE numpy_rc)
if(NOT numpy_rc EQUAL 0 OR NDX_NUMPY_INCLUDE STREQUAL "")
  message(FATAL_ERROR "${Python3_EXECUTABLE} cannot import numpy: the module needs NumPy's headers")
endif()

file(GLOB NDX_PYTHON_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/python/src/*.c)
# ndx_objects are position-independent (they make libndx.so too), so a module can take them.
Python3_add_library(ndx_python MODULE WITH_SOABI ${NDX_PYTHON_SOURCES} $<TARGET_OBJECTS:ndx_objects>)
set_target_properties(ndx_python PROPERTIES OUTPUT_NAME _ndx C_VISIBILITY_PRESET hidden
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/python/ndx)
# The module reads libndx's internal string widths (src/core/string_width.h) and runs the
# variables' row scatters eagerly (src/ops/scatter_rows.h), besides ndx.h.
target_include_directories(ndx_python PRIVATE ${PROJECT_SOURCE_DIR}/include
  ${PROJECT_SOURCE_DIR}/src/core ${PROJECT_SOURCE_DIR}/src/ops ${PROJECT_SOURCE_DIR}/python/src
  ${NDX_NUMPY_INCLUDE})
target_link_libraries(ndx_python PRIVATE Threads::Threads m ZLIB::ZLIB)
if(NDX_HAS_STRINGOP_STRATEGY)
  target_compile_options(ndx_python PRIVATE ${NDX_FLAGS_stringop})
endif()

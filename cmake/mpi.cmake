# libndx_mpi: sharded embedding tables over MPI (include/ndx_mpi.h, src/mpi/). Optional: built
# when find_package(MPI) finds a C MPI (Open MPI or MPICH), silently skipped when it does not.
# Included by the top-level CMakeLists.txt after ndx_shared and the install rules exist.
find_package(MPI QUIET COMPONENTS C)
option(NDX_BUILD_MPI "Build libndx_mpi, its tests, example and benchmark (needs MPI)" ${MPI_C_FOUND})
if(NOT NDX_BUILD_MPI OR NOT MPI_C_FOUND)
  return()
endif()

file(GLOB NDX_MPI_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/mpi/*.c)
add_library(ndx_mpi SHARED ${NDX_MPI_SOURCES})
set_target_properties(ndx_mpi PROPERTIES C_VISIBILITY_PRESET hidden
  VERSION ${PROJECT_VERSION} SOVERSION ${NDX_SOVERSION})
target_include_directories(ndx_mpi PUBLIC
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_include_directories(ndx_mpi PRIVATE ${PROJECT_SOURCE_DIR}/src/mpi)
target_link_libraries(ndx_mpi PUBLIC ndx_shared MPI::MPI_C)
add_library(ndx::ndx_mpi ALIAS ndx_mpi)

# The example of docs/mpi.md and the benchmark (run them with mpirun).
add_executable(mpi_embedding ${PROJECT_SOURCE_DIR}/examples/mpi_embedding.c)
target_link_libraries(mpi_embedding PRIVATE ndx_mpi)
add_executable(mpi_bench ${PROJECT_SOURCE_DIR}/bench/mpi_bench.c)
target_link_libraries(mpi_bench PRIVATE ndx_mpi m)

# Tests: one program run under mpiexec at 1-4 ranks, and the example at 2 ranks against its
# .expected file. The binaries sit in build/tests/ as mpi_* (outside the test_* glob that
# scripts/test.sh runs under valgrind without mpiexec). The environment lets Open MPI run as root
# and put more ranks than cores (MPICH ignores it); under the sanitizers, LeakSanitizer ignores
# what MPI's own libraries keep until exit, and only that (tests/mpi/lsan.supp; the slow unwinder,
# since MPI's libraries keep no frame pointers and fast stacks would stop in unnamed frames).
if(NDX_BUILD_TESTS AND NOT MPIEXEC_EXECUTABLE)
  message(STATUS "ndx: MPI found but no mpiexec: the MPI tests are not registered")
elseif(NDX_BUILD_TESTS)
  add_executable(mpi_test_embedding ${PROJECT_SOURCE_DIR}/tests/mpi/mpi_test_embedding.c)
  target_link_libraries(mpi_test_embedding PRIVATE ndx_mpi)
  set_target_properties(mpi_test_embedding PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/tests)
  set(NDX_MPI_TEST_ENV OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
      OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
      "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/mpi/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0")
  foreach(np 1 2 3 4)
    add_test(NAME mpi_embedding_np${np}
      COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np} ${MPIEXEC_PREFLAGS}
              $<TARGET_FILE:mpi_test_embedding> ${MPIEXEC_POSTFLAGS})
    set_tests_properties(mpi_embedding_np${np} PROPERTIES ENVIRONMENT "${NDX_MPI_TEST_ENV}" TIMEOUT 120
                         RESOURCE_LOCK mpiexec)
  endforeach()
  add_test(NAME mpi_example_embedding
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/mpi/run_example.sh ${MPIEXEC_EXECUTABLE}
            ${MPIEXEC_NUMPROC_FLAG} $<TARGET_FILE:mpi_embedding>
            ${PROJECT_SOURCE_DIR}/examples/mpi_embedding.expected)
  set_tests_properties(mpi_example_embedding PROPERTIES ENVIRONMENT "${NDX_MPI_TEST_ENV}" TIMEOUT 60
                       RESOURCE_LOCK mpiexec)
  # One mpiexec at a time (RESOURCE_LOCK mpiexec, which install_find_package holds too): two Open
  # MPI launchers starting together can race creating their shared session directory under /tmp
  # ("mkdir ... File exists", orte_init fails).
  # libndx_mpi.so exports exactly the NDX_API functions of ndx_mpi.h, as libndx.so those of ndx.h.
  add_test(NAME mpi_exported_symbols
    COMMAND bash ${PROJECT_SOURCE_DIR}/tests/install/exports.sh $<TARGET_FILE:ndx_mpi>
            ${PROJECT_SOURCE_DIR}/include/ndx_mpi.h)
endif()

# Install beside ndx: the header, the library, ndx::ndx_mpi in the same CMake package (ndxConfig
# includes ndx_mpiTargets.cmake when it is there) and ndx_mpi.pc, which carries MPI's flags.
install(FILES ${PROJECT_SOURCE_DIR}/include/ndx_mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ndx_mpi EXPORT ndx_mpiTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT ndx_mpiTargets NAMESPACE ndx:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/ndx)
set(NDX_MPI_PC_CFLAGS "")
foreach(dir ${MPI_C_INCLUDE_DIRS})
  string(APPEND NDX_MPI_PC_CFLAGS " -I${dir}")
endforeach()
foreach(opt ${MPI_C_COMPILE_OPTIONS})
  string(APPEND NDX_MPI_PC_CFLAGS " ${opt}")
endforeach()
foreach(def ${MPI_C_COMPILE_DEFINITIONS})
  string(APPEND NDX_MPI_PC_CFLAGS " -D${def}")
endforeach()
string(REPLACE ";" " " NDX_MPI_PC_LIBS "${MPI_C_LINK_FLAGS} ${MPI_C_LIBRARIES}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/ndx_mpi.pc.in ${PROJECT_BINARY_DIR}/ndx_mpi.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/ndx_mpi.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

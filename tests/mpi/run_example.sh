#!/usr/bin/env bash
# Runs the MPI example of docs/mpi.md on 2 ranks and compares what rank 0 prints with the .expected
# file written by hand from the semantics.
#   run_example.sh MPIEXEC NUMPROC_FLAG PROGRAM EXPECTED
set -euo pipefail
"$1" "$2" 2 "$3" | diff -u "$4" -
echo "example $(basename "$3"): output as expected"

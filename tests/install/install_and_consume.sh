#!/usr/bin/env bash
# Installs the build in $1 into a scratch prefix with `cmake --install`, then builds a separate
# project against it twice: with find_package(ndx) (shared and static) and with pkg-config; and
# checks that `man ndx` shows the installed manual page (tests/install/man_page.sh).
#   install_and_consume.sh BUILD_DIR SOURCE_DIR [SANITIZE]
set -euo pipefail
build=$1 src=$2 sanitize=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=""
[ -n "$sanitize" ] && flags="-fsanitize=$sanitize"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
export LD_LIBRARY_PATH="$work/prefix/lib:$work/prefix/lib64:${LD_LIBRARY_PATH:-}"

cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_C_FLAGS="$flags" -DNDX_EXAMPLES="$src/examples" >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer_shared"
"$work/consumer/consumer_static"
"$work/consumer/graph_replace_minus_one" | diff -u "$src/examples/graph_replace_minus_one.expected" -

pc_dir=$(dirname "$(find "$work/prefix" -name ndx.pc | head -n 1)")
export PKG_CONFIG_PATH="$pc_dir"
if pkg-config --exists ndx_mpi; then # built with MPI: find_package(ndx) gives ndx::ndx_mpi too
  [ -x "$work/consumer/mpi_embedding" ] || { echo "install: no ndx::ndx_mpi from find_package" >&2; exit 1; }
fi
# shellcheck disable=SC2046
cc $flags -o "$work/consumer_pc" "$src/tests/install/consumer/main.c" $(pkg-config --cflags --libs ndx)
"$work/consumer_pc"
echo "install: find_package(ndx) and pkg-config both work"
# The manual page, when the command was built and installed with it.
if [ -x "$work/prefix/bin/ndx" ]; then
  bash "$src/tests/install/man_page.sh" "$work/prefix"
fi

# Every program under examples/ is shown in a page of docs/ as it is, builds against the
# installed package and prints exactly its .expected file (written by hand from TensorFlow's
# semantics).
for ex in "$src"/examples/*.c; do
  name=$(basename "$ex" .c)
  python3 - "$src/docs" "$ex" <<'PY'
import glob, os, sys
docs, example = sys.argv[1], open(sys.argv[2]).read()
if not any(example in open(p).read() for p in glob.glob(os.path.join(docs, "*.md"))):
    sys.exit(f"no page of docs/ shows {sys.argv[2]} as it is")
PY
  if [[ $name == mpi_* ]]; then # libndx_mpi's: ndx_mpi.pc carries MPI's flags; run on 2 ranks
    pkg-config --exists ndx_mpi || { echo "example $name: skipped (ndx built without MPI)"; continue; }
    # shellcheck disable=SC2046
    cc $flags -std=c11 -Wall -Wextra -Werror -o "$work/$name" "$ex" $(pkg-config --cflags --libs ndx_mpi)
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
      OMPI_MCA_btl_vader_single_copy_mechanism=none \
      LSAN_OPTIONS="suppressions=$src/tests/mpi/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0" \
      mpiexec -n 2 "$work/$name" >"$work/$name.out"
    diff -u "${ex%.c}.expected" "$work/$name.out"
    echo "example $name: output as expected (2 ranks)"
    continue
  fi
  # shellcheck disable=SC2046
  cc $flags -std=c11 -Wall -Wextra -Werror -o "$work/$name" "$ex" $(pkg-config --cflags --libs ndx)
  "$work/$name" >"$work/$name.out"
  diff -u "${ex%.c}.expected" "$work/$name.out"
  echo "example $name: output as expected"
done

# The README's graph example (the second C block: a gather and its gradient as slices of rows)
# builds against the installed package and prints the rows it gathered, ids 1, 3 and 1.
python3 - "$src/README.md" "$work/readme_graph.c" <<'PY'
import sys
text = open(sys.argv[1]).read()
blocks = text.split("```c\n")[1:]
if len(blocks) < 2:
    sys.exit("README.md: the graph example (its second C block) is missing")
open(sys.argv[2], "w").write(blocks[1].split("```", 1)[0])
PY
# shellcheck disable=SC2046
cc $flags -std=c11 -Wall -Wextra -Werror -o "$work/readme_graph" "$work/readme_graph.c" \
  $(pkg-config --cflags --libs ndx)
test "$("$work/readme_graph")" = "rows 1 3 1 of the table, each with gradient 1"
echo "README's graph example: output as expected"

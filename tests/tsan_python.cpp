// A Python interpreter inside a ThreadSanitizer executable (TILEWAVE_TSAN):
// the TSan runtime, linked in here, then sees the instrumented tilewave
// module's threads; preloading the runtime into /usr/bin/python3 instead
// crashes at start-up with clang 14. Runs pytest with the given arguments.
//   tsan_python MODULE_DIR PYTEST_ARGS...
#include <pybind11/embed.h>

#include <cstdio>

namespace py = pybind11;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: tsan_python MODULE_DIR PYTEST_ARGS...\n");
    return 2;
  }
  py::scoped_interpreter python;
  py::module_::import("sys").attr("path").attr("insert")(0, argv[1]);
  py::list args;
  for (int i = 2; i < argc; ++i) args.append(py::str(argv[i]));
  return py::module_::import("pytest").attr("main")(args).cast<int>();
}

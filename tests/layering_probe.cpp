// ctest layering_*: preprocessed with one stage's include path only, to show that
// a stage sees its own and earlier stages' headers and not a later stage's
// (analyzer/CMakeLists.txt, docs/model.md "Pipeline").
#include LAYERING_PROBE_HEADER

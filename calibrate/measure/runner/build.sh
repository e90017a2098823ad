#!/usr/bin/env bash
# Builds calibrate/measure/runner/build/tilewave-calibrate with nvcc alone (no CMake needed).
#   CUDA_HOME      CUDA toolkit (default /usr/local/cuda)
#   CUDNN_HOME     cuDNN prefix with include/ and lib/ or lib64/ (default: inside CUDA_HOME)
#   CUDA_ARCH      target SM (default 90 = H100/H200)
#   JOBS           parallel compiles (default: nproc)
# The binary links cudart and libstdc++ statically and needs only libcudnn.so.9 and
# libcublasLt.so.13 at run time (set LD_LIBRARY_PATH to their folders).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
CUDNN_HOME="${CUDNN_HOME:-$CUDA_HOME}"
CUDA_ARCH="${CUDA_ARCH:-90}"
JOBS="${JOBS:-$(nproc)}"
NVCC="$CUDA_HOME/bin/nvcc"
out="$here/build"
mkdir -p "$out/obj"

flags=(-std=c++17 -O2 -lineinfo
       "-gencode=arch=compute_${CUDA_ARCH},code=[sm_${CUDA_ARCH},compute_${CUDA_ARCH}]"
       -I"$CUDNN_HOME/include" -I"$here/../../../analyzer/include" -Xcompiler=-Wall,-Wextra)

newest_header="$(ls -t "$here"/src/*.hpp | head -1)"
compile() {  # $1 = source file; skipped when its object is newer than it and every header
  local obj="$out/obj/$(basename "$(dirname "$1")")_$(basename "$1").o"
  if [[ "$obj" -nt "$1" && "$obj" -nt "$newest_header" && "$obj" -nt "$0" ]]; then return 0; fi
  "$NVCC" "${flags[@]}" -c "$1" -o "$obj"
}

# The analyzer's dependency-free dtype names are shared, not copied.
sources=("$here"/src/*.cpp "$here"/src/*.cu "$here/../../../analyzer/src/core/dtype.cpp")
pids=()
running=0
for src in "${sources[@]}"; do
  compile "$src" &
  pids+=($!)
  running=$((running + 1))
  if (( running >= JOBS )); then wait -n; running=$((running - 1)); fi
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
(( status == 0 )) || { echo "build.sh: compile failed" >&2; exit 1; }

cudnn_lib="$CUDNN_HOME/lib64"; [[ -d "$cudnn_lib" ]] || cudnn_lib="$CUDNN_HOME/lib"
"$NVCC" "${flags[@]}" -o "$out/tilewave-calibrate" "$out"/obj/*.o \
  -L"$cudnn_lib" -L"$CUDA_HOME/lib64" -lcudnn -lcublasLt -ldl \
  -Xcompiler=-static-libstdc++,-static-libgcc
echo "built $out/tilewave-calibrate"

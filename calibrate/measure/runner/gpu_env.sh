# Sourced by the GPU-machine scripts: finds cuDNN's libraries (inside the
# Python environment on the lent H200 machines) and the CUDA toolkit's, so the
# runner built elsewhere finds libcudnn.so.9 and libcublasLt.so.13.
cudnn_lib="$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(list(nvidia.cudnn.__path__)[0], "lib"))' 2>/dev/null)"
[ -f "$cudnn_lib/libcudnn.so.9" ] || cudnn_lib="$(dirname "$(find / -name libcudnn.so.9 2>/dev/null | head -1)")"
export LD_LIBRARY_PATH="$cudnn_lib:/usr/local/cuda-13.0/targets/x86_64-linux/lib:${LD_LIBRARY_PATH:-}"

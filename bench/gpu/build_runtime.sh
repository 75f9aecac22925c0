# shellcheck shell=bash
# Sourced by bench/gpu/check.sh and bench/gpu/campaign.sh on the device
# machine (CUDA toolkit, cuDNN from PyTorch's wheels, no LLVM): defines
#   build_runtime ROOT BUILD NLOHMANN LOGS
# which builds the runtime-only configuration (dlc, dlc-stress) in BUILD with
# nlohmann-json's prefix NLOHMANN (copied once to BUILD/deps: new timestamps
# would rebuild everything that includes it) and cuDNN from the toolkit or
# PyTorch's nvidia.cudnn, exports LD_LIBRARY_PATH and PATH for what it built,
# writes LOGS/device.log, configure.log and build.log, and returns non-zero
# when the build failed. A second call on a warm machine rebuilds nothing.
build_runtime() {
  local root=$1 build=$2 nlohmann=$3 logs=$4 cudnn
  mkdir -p "$logs" "$build/deps"
  # cuDNN: beside the toolkit, or PyTorch's (nvidia.cudnn) on the device image
  # (the folder above the cudnn_graph.h found under the nvidia namespace package).
  cudnn=$(python3 - 2>/dev/null <<'PY'
import glob, os
import nvidia
for root in nvidia.__path__:
    for h in sorted(glob.glob(os.path.join(root, "**", "cudnn_graph.h"), recursive=True)):
        print(os.path.dirname(os.path.dirname(h)))
        raise SystemExit
PY
)
  if [ -n "$cudnn" ]; then
    case ":${LD_LIBRARY_PATH:-}:" in
      *":$cudnn/lib:"*) ;;
      *) export LD_LIBRARY_PATH=$cudnn/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ;;
    esac
  fi
  export PATH=$PATH:/usr/local/cuda/bin
  { nvidia-smi; nvcc --version; echo "cudnn: ${cudnn:-beside the toolkit}"; } >"$logs/device.log" 2>&1
  [ -d "$build/deps/nlohmann" ] || cp -r "$nlohmann" "$build/deps/nlohmann"
  cmake -S "$root" -B "$build" -G Ninja -DDLC_BUILD_COMPILER=OFF -DDLC_BUILD_TESTS=OFF \
    -DCMAKE_PREFIX_PATH="$build/deps/nlohmann" ${cudnn:+-DDLC_CUDNN_ROOT="$cudnn"} \
    >"$logs/configure.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" >"$logs/build.log" 2>&1
}

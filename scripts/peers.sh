#!/bin/sh
# Builds the peer engine make interop and make bench-peers run: llama-server and llama-bench
# (CPU) from the llama.cpp source that the pinned npm package node-llama-cpp bundles as a git
# bundle (peers/package-lock.json). Installs nothing into the main node_modules and never runs
# the package's own install scripts. Cached: a finished build is not redone.
#   PEERS_DIR   where the source and build go (default build-peers); the binaries end up in
#               $PEERS_DIR/bin/llama-server and $PEERS_DIR/bin/llama-bench
#   PEERS_JOBS  parallel compile jobs (default 2)
#   PEERS_NO_AMX=1  build without Intel AMX.
# On a CPU with AMX-INT8 the build is checked once: llama-bench on a tiny Q8_0 model (made by
# $BUILD/pacer). The pinned source loads its tile configuration with _tile_loadconfig, whose
# GCC 12 form names only the configuration's first 8 bytes as read, so GCC drops the stores
# of the tile shapes and the first tile instruction stops with SIGILL. Where that happens it
# is built again with GCC's dead-store elimination off (AMX kept), and if it still stops,
# without AMX; each step is said.
set -eu
cd "$(dirname "$0")/.."
PEERS_DIR=${PEERS_DIR:-build-peers}
JOBS=${PEERS_JOBS:-2}
BUILD=${BUILD:-build}
BIN="$PEERS_DIR/bin"
NO_AMX_FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
KEEP_STORES_FLAGS="-fno-tree-dse -fno-dse"
flags=""
[ "${PEERS_NO_AMX:-0}" = 1 ] && flags=$NO_AMX_FLAGS
if [ -x "$BIN/llama-server" ] && [ -x "$BIN/llama-bench" ] &&
   { [ -z "$flags" ] || [ "$(cat "$BIN/cflags" 2>/dev/null)" = "$flags" ]; }; then
  built=$(cat "$BIN/cflags" 2>/dev/null || true)
  echo "peers: $BIN/llama-server and llama-bench already built${built:+ (with $built)}" >&2
  exit 0
fi
command -v cmake >/dev/null 2>&1 && command -v g++ >/dev/null 2>&1 || {
  echo "peers: cmake and g++ are needed (apt-get install cmake g++)" >&2; exit 1; }
if [ ! -f peers/node_modules/node-llama-cpp/llama/gitRelease.bundle ]; then
  echo "peers: npm ci in peers/ (node-llama-cpp, its pinned version)" >&2
  (cd peers && npm ci --ignore-scripts --omit=optional --no-audit --no-fund --silent) >&2
fi
mkdir -p "$PEERS_DIR"
SRC="$PEERS_DIR/llama.cpp"
if [ ! -d "$SRC/.git" ]; then
  git clone -q peers/node_modules/node-llama-cpp/llama/gitRelease.bundle "$SRC" 2>/dev/null
fi
build() {
  echo "peers: llama.cpp $(git -C "$SRC" rev-parse --short HEAD), building llama-server and llama-bench (CPU, -j$JOBS${1:+, $1})" >&2
  start=$(date +%s)
  cmake -S "$SRC" -B "$PEERS_DIR/cmake" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
    "-DCMAKE_C_FLAGS=$1" "-DCMAKE_CXX_FLAGS=$1" \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF >"$PEERS_DIR/cmake.log" 2>&1 ||
    { tail -20 "$PEERS_DIR/cmake.log" >&2; exit 1; }
  cmake --build "$PEERS_DIR/cmake" -j"$JOBS" --target llama-server llama-bench >"$PEERS_DIR/build.log" 2>&1 ||
    { tail -30 "$PEERS_DIR/build.log" >&2; exit 1; }
  mkdir -p "$BIN"
  cp "$PEERS_DIR/cmake/bin/llama-server" "$PEERS_DIR/cmake/bin/llama-bench" "$BIN/"
  printf '%s\n' "$1" >"$BIN/cflags"
  echo "peers: built in $(( $(date +%s) - start )) s: $BIN/llama-server, $BIN/llama-bench" >&2
}

# 0 when llama-bench runs a tiny Q8_0 model, 132 when it stops with SIGILL
amx_check() {
  m="$PEERS_DIR/amx-check.gguf"
  "$BUILD/pacer" model synth -o "$m" --dim 256 --layers 1 --heads 4 --kv-heads 2 --ffn 512 --type q8_0 \
    --name amx-check >/dev/null 2>&1 || return 0
  "$BIN/llama-bench" -m "$m" -t 2 -p 32 -n 0 -r 1 >/dev/null 2>&1
}

build "$flags"
if [ -z "$flags" ] && grep -qw amx_int8 /proc/cpuinfo 2>/dev/null; then
  if [ ! -x "$BUILD/pacer" ]; then
    echo "peers: this CPU has AMX; no $BUILD/pacer to check llama.cpp's AMX kernels with (make first)" >&2
  else
    amx_check && rc=0 || rc=$?
    if [ $rc -eq 132 ]; then
      echo "peers: llama-bench stops with SIGILL in llama.cpp's AMX kernels (a Q8_0 model); building it again with $KEEP_STORES_FLAGS, which keeps the stores of its tile configuration" >&2
      build "$KEEP_STORES_FLAGS"
      amx_check && rc=0 || rc=$?
      if [ $rc -eq 132 ]; then
        echo "peers: llama-bench still stops with SIGILL; building it without AMX" >&2
        build "$NO_AMX_FLAGS"
      else
        echo "peers: llama.cpp's AMX kernels run" >&2
      fi
    fi
  fi
fi

#!/bin/sh
# Builds the peer engine make interop and make bench-peers run: llama-server and llama-bench
# (CPU) from the llama.cpp source that the pinned npm package node-llama-cpp bundles as a git
# bundle (peers/package-lock.json). Installs nothing into the main node_modules and never runs
# the package's own install scripts. Cached: a finished build is not redone.
#   PEERS_DIR   where the source and build go (default build-peers); the binaries end up in
#               $PEERS_DIR/bin/llama-server and $PEERS_DIR/bin/llama-bench
#   PEERS_JOBS  parallel compile jobs (default 2)
set -eu
cd "$(dirname "$0")/.."
PEERS_DIR=${PEERS_DIR:-build-peers}
JOBS=${PEERS_JOBS:-2}
BIN="$PEERS_DIR/bin"
if [ -x "$BIN/llama-server" ] && [ -x "$BIN/llama-bench" ]; then
  echo "peers: $BIN/llama-server and llama-bench already built" >&2
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
echo "peers: llama.cpp $(git -C "$SRC" rev-parse --short HEAD), building llama-server and llama-bench (CPU, -j$JOBS)" >&2
start=$(date +%s)
cmake -S "$SRC" -B "$PEERS_DIR/cmake" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF \
  -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DBUILD_SHARED_LIBS=OFF >"$PEERS_DIR/cmake.log" 2>&1 ||
  { tail -20 "$PEERS_DIR/cmake.log" >&2; exit 1; }
cmake --build "$PEERS_DIR/cmake" -j"$JOBS" --target llama-server llama-bench >"$PEERS_DIR/build.log" 2>&1 ||
  { tail -30 "$PEERS_DIR/build.log" >&2; exit 1; }
mkdir -p "$BIN"
cp "$PEERS_DIR/cmake/bin/llama-server" "$PEERS_DIR/cmake/bin/llama-bench" "$BIN/"
echo "peers: built in $(( $(date +%s) - start )) s: $BIN/llama-server, $BIN/llama-bench" >&2

#!/bin/sh
# build-llamacpp.sh: builds the December 2025 llama.cpp that ollama vendors (llama/llama.cpp and
# ml/backend/ggml/ggml at ollama commit 49a9c9ba6: gpt-oss, qwen3moe, olmo2, cohere2, mistral3),
# CPU only, with our two drivers on its llama.h: llamacpp-bench (llama-bench's pp/tg tests; that
# tree has no llama-bench) and llamacpp_logits (every position's logits, for the references).
#
#   tools/bench/build-llamacpp.sh OLLAMA_GIT_DIR OUT_DIR [COMMIT]
#
# OLLAMA_GIT_DIR is a clone of github.com/ollama/ollama (a bare one will do); OUT_DIR must be
# outside this repository: the tree is exported there, with a CMakeLists.txt of ours that builds
# ggml (GGML_NATIVE) and libllama from it as ollama's own CMakeLists.txt does. The programs end
# up in OUT_DIR/bin. Needs cmake, g++ and about 10 minutes of two cores.
set -eu

die() { echo "build-llamacpp.sh: $*" >&2; exit 1; }
[ $# -ge 2 ] || { sed -n '7,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
GIT=$1 OUT=$2 COMMIT=${3:-49a9c9ba6}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
case $OUT/ in "$REPO"/*) die "OUT_DIR must be outside the repository ($REPO)" ;; esac
command -v cmake >/dev/null || die "needs cmake (apt-get install cmake)"

if [ ! -f "$OUT/src/llama/llama.cpp/include/llama.h" ]; then
    mkdir -p "$OUT/src"
    git -C "$GIT" archive "$COMMIT" llama/llama.cpp ml/backend/ggml/ggml | tar -x -C "$OUT/src" ||
        die "cannot export llama/llama.cpp and ml/backend/ggml/ggml at $COMMIT from $GIT"
fi

cat > "$OUT/src/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.21)
project(llamacpp_dec C CXX)
find_package(Threads REQUIRED)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(BUILD_SHARED_LIBS ON)
set(GGML_BUILD ON)
set(GGML_SHARED ON)
set(GGML_NATIVE ON)
set(GGML_CPU ON)
set(GGML_LLAMAFILE ON)
set(GGML_OPENMP ON)
set(GGML_CPU_REPACK ON)           # upstream defaults of ggml/CMakeLists.txt, which the tree lacks
set(GGML_SCHED_MAX_COPIES 4)
set(GGML_VERSION_MAJOR 0)
set(GGML_VERSION_MINOR 0)
set(GGML_VERSION_PATCH 0)
set(GGML_VERSION 0.0.0)
set(CMAKE_RUNTIME_OUTPUT_DIRECTORY \${CMAKE_BINARY_DIR}/bin)
set(CMAKE_LIBRARY_OUTPUT_DIRECTORY \${CMAKE_BINARY_DIR}/bin)
set(CMAKE_BUILD_RPATH \${CMAKE_BINARY_DIR}/bin)
set(G \${CMAKE_CURRENT_SOURCE_DIR}/ml/backend/ggml/ggml)
set(L \${CMAKE_CURRENT_SOURCE_DIR}/llama/llama.cpp)
include_directories(\${G}/src \${G}/src/include \${G}/src/ggml-cpu \${G}/include \${L}/include)
add_compile_definitions(NDEBUG GGML_VERSION=0x0 GGML_COMMIT=0x0)
add_subdirectory(\${G}/src ggml)
file(GLOB LLAMA_SRC \${L}/src/*.cpp \${L}/src/models/*.cpp)
add_library(llama \${LLAMA_SRC})
target_include_directories(llama PUBLIC \${L}/include \${L}/src)
target_link_libraries(llama PUBLIC ggml ggml-base ggml-cpu)
add_executable(llamacpp-bench \${REPO_DIR}/tools/bench/llamacpp_bench.cpp)
target_compile_definitions(llamacpp-bench PRIVATE PEER_COMMIT="ollama-$COMMIT")
target_link_libraries(llamacpp-bench llama)
add_executable(llamacpp_logits \${REPO_DIR}/tools/reference/llamacpp_logits.cpp)
target_link_libraries(llamacpp_logits llama)
EOF

cmake -S "$OUT/src" -B "$OUT/build" -DCMAKE_BUILD_TYPE=Release -DREPO_DIR="$REPO" > "$OUT/cmake.log" 2>&1 ||
    { tail -n 30 "$OUT/cmake.log" >&2; die "cmake failed (log: $OUT/cmake.log)"; }
cmake --build "$OUT/build" -j "$(nproc 2>/dev/null || echo 2)" --target llamacpp-bench llamacpp_logits \
    > "$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log" >&2; die "build failed (log: $OUT/build.log)"; }
mkdir -p "$OUT/bin"
for p in llamacpp-bench llamacpp_logits; do ln -sf "$OUT/build/bin/$p" "$OUT/bin/$p"; done
echo "built $OUT/bin/llamacpp-bench and $OUT/bin/llamacpp_logits (ollama $COMMIT's llama.cpp)"

# swa.h - build, test and benchmark. `make` builds the programs and tests into build/.
#
#   make                 programs and tests
#   make test            build them and the compile checks, and run every test and check
#   make test-aarch64    the same suite cross-compiled for AArch64 (NEON) and run under qemu-user
#   make test-nosimd     the suite built with -DSWA_NO_SIMD (the scalar kernels only)
#   make test-windows    library, programs and tests cross-built with MinGW-w64; the core tests
#                        and compile checks run under Wine
#   make run             a story from a small model
#   make bench           benchmarks, written to build/bench.md
#
# The implementation is compiled once per build folder, into $(BUILD)/swa.o, and every program,
# example and test links it; the tests and the benchmark that check internals see them through
# the test-only switch SWA_INTERNALS (swa.h, "internal declarations"), with which swa.o is built.
# Each program's and test's own file is compiled to an object apart from the link, so that those
# compile beside swa.o. The compile checks and the two tests that bring their own allocator
# compile the header themselves, as a host program does: `make test` builds them, `make` does not.
CC      ?= cc
CXX     ?= c++
CFLAGS  ?= -std=c11 -O2 -Wall -Wextra -Wpedantic
LDLIBS  := -lm -lpthread
BUILD   ?= build
RUN     ?=
# make test SANITIZE=1: AddressSanitizer + UndefinedBehaviorSanitizer; TSAN=1: ThreadSanitizer
# Both run the tests' quick sizes (SWA_TEST_QUICK): the memory errors and races they look for show
# on those sizes as on all of them, and the plain run checks the arithmetic at every size. Line
# tables (-g1) are all a sanitizer's report needs; full debug information only slows the compile.
ifeq ($(SANITIZE),1)
CFLAGS  += -O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all -DSWA_TEST_QUICK -DSWA_TEST_SLOW
BUILD   := build/sanitize
export ASAN_OPTIONS := allocator_may_return_null=1   # a failed allocation is a tested error path
endif
ifeq ($(TSAN),1)
CFLAGS  += -O1 -g1 -fsanitize=thread -DSWA_TEST_QUICK -DSWA_TEST_SLOW -DSWA_TEST_TSAN
BUILD   := build/tsan
export TSAN_OPTIONS := allocator_may_return_null=1
endif
# Builds run on every core unless the caller says otherwise (make -j1); a sub-make shares its
# parent's jobs.
ifeq ($(filter -j% --jobserver%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 2)
endif
LIB     := $(BUILD)/swa.o
HEADERS := swa.h tools/common/gguf_writer.h tools/common/printable.h tools/common/safe_write.h tools/common/targets.h \
           tools/common/timing.h tools/common/tool.h tools/common/progress.h tools/common/gguf_copy.h \
           tools/common/interrupt.h

PROGRAM_NAMES := swa-generate swa-simple swa-inspect swa-convert-llama2c swa-tokenize swa-perplexity \
                 swa-quantize swa-mkmodel swa-bench swa-span swa-kbench swa-batched-bench swa-template \
                 swa-gbnf-validator swa-grammar-bench swa-spec-bench swa-embedding
# The examples the documents quote, beside swa-simple; POSIX only (threads, atomics, nanosleep).
EXAMPLE_NAMES := swa-sequences swa-control swa-chat swa-grammar swa-speculative
PROGRAMS := $(addprefix $(BUILD)/,$(PROGRAM_NAMES) $(EXAMPLE_NAMES))
TESTS    := $(patsubst tests/%.c,$(BUILD)/%,$(wildcard tests/test_*.c))
# ThreadSanitizer runs the tests whose threads share state beyond the pool's own handoff: the pool
# and platform, sequences in threads, the rings under threads, the server, a verifier's rewinds
# on a pool of 2, the grammar's shared trie (test_speculative and test_grammar run only those
# tests under SWA_TEST_TSAN). The others start threads only through the same pool these exercise,
# and the parsers' and kernels' tests none; at twenty to a hundred times their plain time they
# would double the stage (ASan and UBSan still run them all).
TSAN_TESTS := test_grammar test_longrun test_platform test_seq test_server test_speculative test_window
ifeq ($(TSAN),1)
TESTS    := $(filter $(addprefix $(BUILD)/,$(TSAN_TESTS)),$(TESTS))
endif
COMPILE_CHECKS := $(BUILD)/compile_cpp $(BUILD)/compile_static $(BUILD)/compile_two_tu $(BUILD)/compile_no_threads \
                  $(BUILD)/compile_warnings $(BUILD)/compile_no_tokenizer $(BUILD)/compile_no_sampler \
                  $(BUILD)/compile_no_stdio $(BUILD)/compile_no_jinja $(BUILD)/compile_no_grammar $(BUILD)/compile_simple \
                  $(BUILD)/compile_no_speculative $(BUILD)/compile_no_tools
# The sanitized builds run the tests and the examples; the compile checks, which build the whole
# header once per switch as hosts do, run in the plain and the cross builds.
ifneq ($(SANITIZE)$(TSAN),)
COMPILE_CHECKS :=
endif
TEST_FLAGS := -DSWA_TEST_BIN='"$(BUILD)/"' -DSWA_TEST_RUN='"$(RUN) "'

.PHONY: all programs server tests test test-aarch64 test-port test-nosimd test-windows windows run bench fuzz clean cmocka
all: $(LIB) programs server tests   # swa.o first: the longest compile, the rest beside it

programs: $(PROGRAMS)

$(BUILD):
	@mkdir -p $(BUILD)

# The implementation, once: SWA_INTERNALS gives the few functions the kernel tests call external
# linkage (swa.h, "internal declarations"); everything else stays static to this object.
$(LIB): swa.h | $(BUILD)
	$(CC) $(CFLAGS) -DSWA_IMPLEMENTATION -DSWA_INTERNALS -x c -c swa.h -o $@

# A program's object, then the program: its file compiles while swa.o does, and links after.
$(BUILD)/obj/generate.o: examples/generate.c swa.h tools/common/interrupt.h tools/common/progress.h tools/common/safe_write.h | $(BUILD)/obj
	$(CC) $(CFLAGS) -I. -c $< -o $@
$(BUILD)/obj/%.o: tools/cli/%.c swa.h $(HEADERS) | $(BUILD)/obj
	$(CC) $(CFLAGS) -I. -c $< -o $@
$(BUILD)/obj/%.o: tools/bench/%.c swa.h $(HEADERS) | $(BUILD)/obj
	$(CC) $(CFLAGS) -I. -c $< -o $@
$(BUILD)/obj:
	@mkdir -p $@
$(BUILD)/swa-generate: $(BUILD)/obj/generate.o $(LIB)
	$(CC) $(CFLAGS) $< $(LIB) -o $@ $(LDLIBS)
$(BUILD)/swa-%: $(BUILD)/obj/%.o $(LIB)
	$(CC) $(CFLAGS) $< $(LIB) -o $@ $(LDLIBS)
.PRECIOUS: $(BUILD)/obj/%.o $(BUILD)/obj/test_%.o   # kept: a second `make test` rebuilds nothing
# The README's example and the ones the documents quote define SWA_IMPLEMENTATION, as a host's
# one file does. Here they link swa.o instead: SWA__IMPLEMENTED (swa.h's guard against a second
# implementation) set beforehand leaves their copy out, and SWA_INTERNALS declares what swa.o
# exports as it does. compile_simple builds the README's example whole, as its own command does.
$(BUILD)/obj/example_%.o: examples/%.c swa.h | $(BUILD)/obj
	$(CC) $(CFLAGS) -DSWA__IMPLEMENTED -DSWA_INTERNALS -I. -c $< -o $@
$(BUILD)/swa-simple $(addprefix $(BUILD)/,$(EXAMPLE_NAMES)): $(BUILD)/swa-%: $(BUILD)/obj/example_%.o $(LIB)
	$(CC) $(CFLAGS) $< $(LIB) -o $@ $(LDLIBS)


# swa-server (examples/server.c) and its load generator: HTTP from libmicrohttpd and JSON from cJSON,
# Debian's libmicrohttpd-dev and libcjson-dev. Without them `make` says what to install and goes on,
# and the server's tests skip. The check links a program, so a cross compiler without the target's
# libraries skips too.
SERVER_LIBS := -lmicrohttpd -lcjson
HAVE_SERVER := $(shell printf '\043include <microhttpd.h>\n\043include <cjson/cJSON.h>\nint main(void){return !cJSON_Version();}\n' | \
                 $(CC) -x c - -o /dev/null $(SERVER_LIBS) 2>/dev/null && echo 1)
SERVER_PROGRAMS := $(BUILD)/swa-server $(BUILD)/swa-loadgen
ifeq ($(HAVE_SERVER),1)
server: $(SERVER_PROGRAMS)
else
server:
	@echo "make: swa-server was not built: it needs libmicrohttpd and cJSON (apt-get install libmicrohttpd-dev libcjson-dev)"
endif
$(BUILD)/swa-server: examples/server.c examples/server_request.c examples/server_request.h examples/server_cache.c \
                    examples/server_cache.h $(LIB) | $(BUILD)
	$(CC) $(CFLAGS) -I. examples/server.c examples/server_request.c examples/server_cache.c $(LIB) -o $@ $(SERVER_LIBS) $(LDLIBS)
$(BUILD)/swa-loadgen: tools/bench/loadgen.c | $(BUILD)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

# The library must also build as a host builds it: as C++, as static functions, from two
# translation units, and without threads (and then without -lpthread). These checks compile the
# whole header each, so without optimisation (-O0): they check that it builds and runs, and the
# warning matrix below compiles it optimised, for the warnings only optimisation finds.
CHECK_CFLAGS := $(CFLAGS) -O0
$(BUILD)/compile_cpp: tests/compile_cpp.cpp swa.h | $(BUILD)
	$(CXX) -std=c++11 -O0 -Wall -Wextra -Wpedantic $(filter -g -fsanitize%,$(CFLAGS)) -I. $< -o $@ $(LDLIBS)
$(BUILD)/compile_static: tests/compile_static.c swa.h | $(BUILD)
	$(CC) $(CHECK_CFLAGS) -I. $< -o $@ $(LDLIBS)
$(BUILD)/compile_two_tu: tests/compile_two_tu_a.c tests/compile_two_tu_b.c swa.h | $(BUILD)
	$(CC) $(CHECK_CFLAGS) -I. tests/compile_two_tu_a.c tests/compile_two_tu_b.c -o $@ $(LDLIBS)
$(BUILD)/compile_no_threads: tests/compile_no_threads.c swa.h | $(BUILD)
	$(CC) $(CHECK_CFLAGS) -I. $< -o $@ -lm
# The README's example with the README's command (C99), unoptimised as the checks above.
$(BUILD)/compile_simple: examples/simple.c swa.h | $(BUILD)
	$(CC) $(filter-out -std=%,$(CHECK_CFLAGS)) -std=c99 -I. $< -o $@ $(LDLIBS)

# The compile-out switches each leave a smaller library that still works.
$(BUILD)/compile_no_%: tests/compile_no_%.c tests/compile_sampler_check.h swa.h | $(BUILD)
	$(CC) $(CHECK_CFLAGS) -I. $< -o $@ $(LDLIBS)

# The warning matrix: the header warning-free with -Werror under WARN_C in C (the default build
# compiled whole; without SIMD, threads or mmap checked for syntax) and WARN_CXX in C++, with
# $(CC)/$(CXX) and with clang/clang++ (WARN_CLANG; a cross build passes its --target). There is
# no Apple SDK here: the Darwin branches are compiled with __APPLE__ defined over Linux headers.
WARN_C     := -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wstrict-prototypes -Wmissing-prototypes -Werror
WARN_CXX   := -Wall -Wextra -Wpedantic -Werror
WARN_CLANG ?= clang
WARN_VARIANTS := -DSWA_NO_SIMD -DSWA_NO_AMX -DSWA_NO_THREADS -DSWA_NO_MMAP -DSWA_NO_TOKENIZER -DSWA_NO_SAMPLER -DSWA_NO_STDIO -DSWA_NO_JINJA \
                 -DSWA_NO_GRAMMAR -DSWA_NO_SPECULATIVE -DSWA_NO_TOOLS \
                 -D_DEFAULT_SOURCE
$(BUILD)/compile_warnings: tests/compile_warnings.c tests/compile_cpp.cpp tests/compile_c89.c swa.h | $(BUILD)
	$(CC) -std=c11 -O2 $(WARN_C) -I. $< -o $@ $(LDLIBS)
	@set -e; for v in $(WARN_VARIANTS); do echo "$(CC) -fsyntax-only $(WARN_C) $$v"; \
	  $(CC) -std=c11 -fsyntax-only $(WARN_C) $$v -I. $<; done
	$(CXX) -std=c++11 -fsyntax-only $(WARN_CXX) -I. tests/compile_cpp.cpp
	@if $(CC) -std=c89 -fsyntax-only -I. tests/compile_c89.c 2> $@.c89; then echo "C89 compiled swa.h" >&2; exit 1; fi; \
	  if [ "$$(grep -c 'error:' $@.c89)" != 1 ] || ! grep -q 'needs C99' $@.c89; then cat $@.c89 >&2; exit 1; fi; \
	  echo "$(CC) -std=c89: one error, that C99 is needed"
	@set -e; if command -v $(firstword $(WARN_CLANG)) >/dev/null; then \
	  for v in "" $(WARN_VARIANTS); do echo "$(WARN_CLANG) -fsyntax-only $(WARN_C) $$v"; \
	    $(WARN_CLANG) -std=c11 -fsyntax-only $(WARN_C) $$v -I. $<; done; \
	  echo "$(WARN_CLANG) -fsyntax-only $(WARN_C) -U__linux__ -D__APPLE__ (the Darwin branches, Linux headers)"; \
	  $(WARN_CLANG) -std=c11 -fsyntax-only $(WARN_C) -U__linux__ -D__APPLE__ -I. $<; \
	  echo "$(WARN_CLANG) -x c++ -fsyntax-only $(WARN_CXX)"; \
	  $(WARN_CLANG) -x c++ -std=c++11 -fsyntax-only $(WARN_CXX) -I. tests/compile_cpp.cpp; \
	else echo "compile_warnings: $(firstword $(WARN_CLANG)) is not installed: the clang half of the matrix was not checked"; fi

# These two bring their own SWA_MALLOC, so they compile the implementation with it, as a host
# does; `make test` builds them with the compile checks.
SELF_CONTAINED := test_platform test_longrun
HOST_TESTS := $(filter $(addprefix $(BUILD)/,$(SELF_CONTAINED)),$(TESTS))
tests: cmocka $(filter-out $(HOST_TESTS),$(TESTS))

$(BUILD)/obj/test_%.o: tests/test_%.c tests/testutil.h tests/programs.h swa.h $(HEADERS) | $(BUILD)/obj cmocka
	$(CC) $(CFLAGS) $(TEST_FLAGS) -I. -c $< -o $@
$(BUILD)/test_%: $(BUILD)/obj/test_%.o $(LIB)
	$(CC) $(CFLAGS) $< $(LIB) -o $@ -lcmocka $(LDLIBS)

$(HOST_TESTS): $(BUILD)/%: tests/%.c tests/testutil.h tests/programs.h $(HEADERS) | $(BUILD) cmocka
	$(CC) $(CFLAGS) $(TEST_FLAGS) -I. $< -o $@ -lcmocka $(LDLIBS)

# test_server drives swa-server (when it is built) with curl, swa-generate and swa-loadgen; its draft
# model of another vocabulary is written by swa-mkmodel
$(BUILD)/test_server: $(BUILD)/swa-generate $(BUILD)/swa-mkmodel | server

# test_grammar runs swa-gbnf-validator
$(BUILD)/test_grammar: $(BUILD)/swa-gbnf-validator

# test_speculative builds models with swa-mkmodel and runs swa-generate --lookup
$(BUILD)/test_speculative: $(BUILD)/swa-mkmodel $(BUILD)/swa-generate

# test_embedding builds its model with swa-mkmodel and runs swa-embedding
$(BUILD)/test_embedding: $(BUILD)/swa-mkmodel $(BUILD)/swa-embedding

# test_arch builds its models with swa-mkmodel (arguments from tests/data/arch-*.ref), runs swa-inspect
$(BUILD)/test_arch: $(BUILD)/swa-mkmodel $(BUILD)/swa-inspect

# cmocka comes from Debian's libcmocka-dev; tests/need-cmocka.sh installs it when it may.
cmocka:
	@CC="$(CC)" sh tests/need-cmocka.sh

test: all $(COMPILE_CHECKS) $(HOST_TESTS)
	@set -e; for t in $(COMPILE_CHECKS) $(TESTS); do echo "== $$t"; s=$$(date +%s); $(RUN) $$t; \
	  echo "== $$t: $$(( $$(date +%s) - s )) s"; done; \
	  echo "== tests/test_examples.sh"; sh tests/test_examples.sh $(BUILD) $(RUN); \
	  echo "== tests/test_haproxy.sh"; sh tests/test_haproxy.sh $(BUILD) $(RUN); \
	  echo "== tests/test_docs.sh"; sh tests/test_docs.sh; echo "all tests passed"

# The cross toolchain's loader (libc6-arm64-cross) must get the C library of the same build;
# without LD_LIBRARY_PATH it finds the multiarch libc6:arm64 that libcmocka-dev:arm64 pulls in,
# a different Debian revision, and pthread_create spins forever inside the mismatched pair.
AARCH64_RUN := qemu-aarch64-static -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib
test-aarch64:
	@command -v aarch64-linux-gnu-gcc >/dev/null && command -v qemu-aarch64-static >/dev/null || \
	  { echo "test-aarch64 needs: apt-get install gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user-static libcmocka-dev:arm64 (after dpkg --add-architecture arm64)"; exit 1; }
	$(MAKE) test-port CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ BUILD=build/aarch64 RUN="$(AARCH64_RUN)" \
	  WARN_CLANG="clang --target=aarch64-linux-gnu" \
	  CFLAGS="$(CFLAGS) -DSWA_TEST_QUICK -DSWA_TEST_SLOW"

# What the cross builds run (NEON under qemu, Windows under Wine): the tests that need no POSIX
# shell and no program of ours, beside the warning matrix and the C++ build for the target. The
# rest (programs, server, tools) is the same C on every target and runs in the host's `make test`.
PORT_TESTS  := test_platform test_writes test_gguf test_model test_tokenizer test_sampler test_json test_toolcalls \
               test_kernels test_quant test_window test_seq
test-port: cmocka $(addprefix $(BUILD)/,compile_warnings compile_cpp $(PORT_TESTS))
	@set -e; for t in $(addprefix $(BUILD)/,compile_cpp $(PORT_TESTS)); do echo "== $$t"; s=$$(date +%s); $(RUN) $$t; \
	  echo "== $$t: $$(( $$(date +%s) - s )) s"; done; echo "all $(BUILD) tests passed"

test-nosimd:
	$(MAKE) test BUILD=build/nosimd CFLAGS="$(CFLAGS) -DSWA_NO_SIMD"

# make test-windows: everything cross-built with MinGW-w64 into build/windows (the programs too,
# which are built but not run: their tests drive them through a POSIX shell), then the tests
# that need no shell and the compile checks run under Wine. cmocka is not packaged for MinGW in
# Debian, so it is built for the target from Debian's source package, fetched through the
# machine's own apt sources (tests/cmocka-source.sh), with cmake. Its fail_msg formats are checked
# against Microsoft's printf, which knows no %zu: the tests are built with -Wno-format.
WIN_PREFIX ?= x86_64-w64-mingw32-
WIN_BUILD  := build/windows
# C99 printf (%zu) from MinGW's own stdio; winpthreads for the tools' clock_gettime and threads
WIN_CFLAGS := -std=c11 -O2 -Wall -Wextra -Wpedantic -Werror -D__USE_MINGW_ANSI_STDIO=1
WIN_LIBS   := -static -lm -lpthread
WIN_CMOCKA := $(WIN_BUILD)/cmocka/lib/libcmocka-static.a
WIN_LIB    := $(WIN_BUILD)/swa.o
WIN_TESTS  := $(PORT_TESTS)
# The warning matrix (SWA_NO_THREADS among its variants) and C++; the other switches compile the
# same C on every target, and each whole-header build costs MinGW a minute.
WIN_CHECKS := compile_warnings compile_cpp
# One wineserver for the whole run (-p: it stays until killed; one left by an interrupted run is
# ended first): left to itself it exits a few seconds after each program, and a program starting
# as it goes loses its connection ("recvmsg: Connection reset").
WIN_PREFIX_DIR := $(abspath $(WIN_BUILD))/wine
WINE_ENV   := WINEDEBUG=-all WINEPREFIX=$(WIN_PREFIX_DIR)
WINE       := $(WINE_ENV) wine

$(WIN_CMOCKA):
	@rm -rf $(WIN_BUILD)/cmocka-source && mkdir -p $(WIN_BUILD)/cmocka-source
	sh tests/cmocka-source.sh $(WIN_BUILD)/cmocka-source
	cd $(WIN_BUILD)/cmocka-source/src && cmake -S . -B build -DCMAKE_SYSTEM_NAME=Windows \
	  -DCMAKE_C_COMPILER=$(WIN_PREFIX)gcc -DCMAKE_RC_COMPILER=$(WIN_PREFIX)windres -DWITH_STATIC_LIB=ON \
	  -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(abspath $(WIN_BUILD))/cmocka \
	  > cmake.log && cmake --build build > build.log && cmake --install build > install.log

$(WIN_LIB): swa.h | $(WIN_CMOCKA)
	$(WIN_PREFIX)gcc $(WIN_CFLAGS) -DSWA_IMPLEMENTATION -DSWA_INTERNALS -x c -c swa.h -o $@
$(WIN_BUILD)/swa-generate.exe: examples/generate.c tools/common/interrupt.h tools/common/progress.h tools/common/safe_write.h $(WIN_LIB)
	$(WIN_PREFIX)gcc $(WIN_CFLAGS) -I. $< $(WIN_LIB) -o $@ $(WIN_LIBS)
# swa-generate as a user builds it with MinGW's defaults: neither -static nor -lpthread, so no
# libwinpthread-1.dll beside the program (its clock is QueryPerformanceCounter); test-windows runs it.
$(WIN_BUILD)/swa-generate-plain.exe: examples/generate.c tools/common/interrupt.h tools/common/progress.h tools/common/safe_write.h $(WIN_LIB)
	$(WIN_PREFIX)gcc -O2 -I. $< $(WIN_LIB) -o $@ -lm
$(WIN_BUILD)/swa-simple.exe: examples/simple.c swa.h | $(WIN_CMOCKA)
	$(WIN_PREFIX)gcc $(WIN_CFLAGS) -O0 -I. $< -o $@ $(WIN_LIBS)
$(WIN_BUILD)/swa-%.exe: tools/cli/%.c $(WIN_LIB) $(HEADERS)
	$(WIN_PREFIX)gcc $(WIN_CFLAGS) -I. $< $(WIN_LIB) -o $@ $(WIN_LIBS)
$(WIN_BUILD)/swa-%.exe: tools/bench/%.c $(WIN_LIB) $(HEADERS)
	$(WIN_PREFIX)gcc $(WIN_CFLAGS) -I. $< $(WIN_LIB) -o $@ $(WIN_LIBS)
WIN_TEST_CFLAGS := $(WIN_CFLAGS) -Wno-format -I. -I$(WIN_BUILD)/cmocka/include
WIN_TEST_LIBS   := -L$(WIN_BUILD)/cmocka/lib -lcmocka-static $(WIN_LIBS)
$(WIN_BUILD)/test_%.exe: tests/test_%.c tests/testutil.h tests/programs.h $(WIN_LIB) $(HEADERS) $(WIN_CMOCKA)
	$(WIN_PREFIX)gcc $(WIN_TEST_CFLAGS) $< $(WIN_LIB) -o $@ $(WIN_TEST_LIBS)
$(addprefix $(WIN_BUILD)/,$(addsuffix .exe,$(SELF_CONTAINED))): $(WIN_BUILD)/%.exe: tests/%.c tests/testutil.h \
  tests/programs.h $(HEADERS) $(WIN_CMOCKA)
	$(WIN_PREFIX)gcc $(WIN_TEST_CFLAGS) $< -o $@ $(WIN_TEST_LIBS)
$(WIN_BUILD)/compile_cpp.exe: tests/compile_cpp.cpp swa.h | $(WIN_CMOCKA)
	$(WIN_PREFIX)g++ -std=c++11 -O0 -Wall -Wextra -Wpedantic -Werror -I. $< -o $@ $(WIN_LIBS)
$(WIN_BUILD)/compile_warnings.exe: tests/compile_warnings.c swa.h | $(WIN_CMOCKA)
	$(WIN_PREFIX)gcc -std=c11 -O2 $(WARN_C) -I. $< -o $@ $(WIN_LIBS)

windows: $(addprefix $(WIN_BUILD)/,$(addsuffix .exe,$(PROGRAM_NAMES) swa-generate-plain $(WIN_CHECKS) $(WIN_TESTS)))

test-windows:
	@command -v $(WIN_PREFIX)gcc >/dev/null && command -v wine >/dev/null && command -v cmake >/dev/null || \
	  { echo "test-windows needs: apt-get install mingw-w64 wine wine64 cmake"; exit 1; }
	$(MAKE) windows
	@set -e; mkdir -p $(WIN_PREFIX_DIR); $(WINE_ENV) wineserver -k 2>/dev/null || true; $(WINE_ENV) wineserver -w; \
	  $(WINE_ENV) wineserver -p; trap '$(WINE_ENV) wineserver -k || true' EXIT; \
	  for t in $(WIN_CHECKS) $(WIN_TESTS); do echo "== $(WIN_BUILD)/$$t.exe (wine)"; \
	  $(WINE) $(WIN_BUILD)/$$t.exe; done; \
	  $(WINE) $(WIN_BUILD)/swa-generate-plain.exe -m $(MODEL) -p "Once upon a time" -n 8 --temp 0
	@echo "all Windows tests passed under Wine"

# `make run`: a story from the model this project trained (examples/models, 5 MB, window 64).
MODEL  ?= examples/models/swa-stories.gguf
PROMPT ?= Once upon a time
run: $(BUILD)/swa-generate $(MODEL)
	$(BUILD)/swa-generate -m $(MODEL) -p "$(PROMPT)" -n 400

# llama2.c's stories260K from ../shared, converted: make run MODEL=build/stories260K.gguf
$(BUILD)/stories260K.gguf: | $(BUILD)/swa-convert-llama2c
	$(BUILD)/swa-convert-llama2c ../shared/models/stories260K.bin ../shared/models/tok512.bin $@

bench: programs
	sh tools/bench/bench.sh $(BUILD)

# make fuzz: libFuzzer (clang) on the GGUF loader, the tokenizer, the chat templates, the snapshot loader and
# JSON Schema to grammar,
# FUZZ_SECONDS each, with seeds written by swa-mkmodel; crashing inputs are left in build/fuzz/ as crash-*.
FUZZ_SECONDS ?= 60
# The fuzzers drive the parsers (GGUF, tokenizer, chat templates), so they are built on the scalar
# kernels (-DSWA_NO_SIMD): clang's sanitizers take minutes over the SIMD sets, the parsers seconds.
FUZZ_CFLAGS := -std=c11 -O1 -g1 -fsanitize=address,undefined -fno-sanitize-recover=all -DSWA_NO_SIMD -I.
FUZZ_LIB    := build/fuzz/swa.o
$(FUZZ_LIB): swa.h
	@mkdir -p build/fuzz
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -DSWA_IMPLEMENTATION -DSWA_INTERNALS -x c -c swa.h -o $@
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_LIB) -o $@ -lm -lpthread
# The runs are targets of their own, so that make's jobs run them side by side.
FUZZ_BPE_VOCAB := ../shared/testdata/ggml-vocab-llama-bpe.gguf
.PHONY: fuzz-seeds fuzz-gguf fuzz-spm fuzz-bpe fuzz-chat fuzz-jinja fuzz-state fuzz-server fuzz-schema fuzz-grammar fuzz-toolcalls
fuzz: fuzz-gguf fuzz-spm fuzz-bpe fuzz-chat fuzz-jinja fuzz-state fuzz-server fuzz-schema fuzz-grammar fuzz-toolcalls
fuzz-seeds: $(BUILD)/swa-mkmodel
	@mkdir -p build/fuzz/seeds-gguf build/fuzz/seeds-spm build/fuzz/seeds-bpe build/fuzz/seeds-chat build/fuzz/seeds-state
	$(BUILD)/swa-mkmodel --shape custom --layers 2 --dim 32 --heads 2 --kv-heads 1 --ff 32 --vocab 260 --ctx 64 \
	  --window 8 --arch gemma2 --type f16 build/fuzz/state-model.gguf 2>/dev/null
	for t in f32 f16 q8_0 q4_0; do $(BUILD)/swa-mkmodel --shape custom --layers 1 --dim 32 --heads 2 --kv-heads 1 \
	  --ff 32 --vocab 260 --ctx 64 --window 8 --type $$t build/fuzz/seeds-gguf/tiny-$$t.gguf 2>/dev/null; done
	head -c 2000 examples/models/heldout.txt > build/fuzz/seeds-spm/heldout
	cp build/fuzz/seeds-spm/heldout build/fuzz/seeds-bpe/heldout
	cp tests/data/chat_templates.txt build/fuzz/seeds-chat/templates
	@mkdir -p build/fuzz/seeds-schema
	awk '/^== /{getline; n++; print > ("build/fuzz/seeds-schema/reference-" n)}' tests/data/schema/reference.txt
	awk '/^[=!]= /{n++; next} /^[#+-]/{next} {print >> ("build/fuzz/seeds-schema/llamacpp-" n)}' tests/data/schema/llamacpp.txt
fuzz-gguf: build/fuzz/fuzz_gguf fuzz-seeds
	cd build/fuzz && ./fuzz_gguf -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -rss_limit_mb=4096 seeds-gguf
fuzz-spm: build/fuzz/fuzz_tokenizer fuzz-seeds
	cd build/fuzz && SWA_FUZZ_VOCAB=../../examples/models/swa-stories.gguf ./fuzz_tokenizer -max_total_time=$(FUZZ_SECONDS) seeds-spm
fuzz-bpe: build/fuzz/fuzz_tokenizer fuzz-seeds
	if [ -f $(FUZZ_BPE_VOCAB) ]; then cd build/fuzz && \
	  SWA_FUZZ_VOCAB=../../$(FUZZ_BPE_VOCAB) ./fuzz_tokenizer -max_total_time=$(FUZZ_SECONDS) seeds-bpe; \
	else echo "fuzz-bpe: $(FUZZ_BPE_VOCAB) is absent: the byte-level BPE vocabulary was not fuzzed"; fi
fuzz-chat: build/fuzz/fuzz_chat fuzz-seeds
	cd build/fuzz && ./fuzz_chat -max_total_time=$(FUZZ_SECONDS) -max_len=4096 seeds-chat
# the real chat templates are the Jinja fuzzer's seeds
fuzz-jinja: build/fuzz/fuzz_jinja
	@mkdir -p build/fuzz/seeds-jinja && cp tests/data/jinja/templates/*.jinja build/fuzz/seeds-jinja/
	cd build/fuzz && ./fuzz_jinja -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -rss_limit_mb=4096 seeds-jinja
fuzz-state: build/fuzz/fuzz_state fuzz-seeds
	cd build/fuzz && SWA_FUZZ_MODEL=state-model.gguf SWA_FUZZ_SEEDS=seeds-state \
	  ./fuzz_state -max_total_time=$(FUZZ_SECONDS) -max_len=65536 seeds-state
# GBNF grammars (then a NUL and a text to match), seeded with llama.cpp's grammars
fuzz-grammar: build/fuzz/fuzz_grammar
	@mkdir -p build/fuzz/seeds-grammar && for f in tests/data/grammar/*.gbnf; do \
	  cp $$f build/fuzz/seeds-grammar/$$(basename $$f); done
	{ cat tests/data/grammar/json.gbnf; printf '\000{"a": [1, 2.5e3, "x\\u00e9"], "b": null}'; } > build/fuzz/seeds-grammar/json-doc
	cd build/fuzz && ./fuzz_grammar -max_total_time=$(FUZZ_SECONDS) -max_len=16384 -rss_limit_mb=4096 seeds-grammar
# a model's answers read for tool calls and reasoning: whole and streamed, in every format
fuzz-toolcalls: build/fuzz/fuzz_toolcalls
	@mkdir -p build/fuzz/seeds-toolcalls
	printf '<think>\nx\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"location": "Paris"}}\n</tool_call>' \
	  > build/fuzz/seeds-toolcalls/hermes
	printf '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"location": "Paris"}' > build/fuzz/seeds-toolcalls/mistral
	printf '<|channel|>analysis<|message|>x<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"location":"Paris"}<|call|>' \
	  > build/fuzz/seeds-toolcalls/gpt-oss
	printf 'all\nhi>>>get_weather\n{"location": "Paris"}' > build/fuzz/seeds-toolcalls/functionary
	printf '{"tool_calls": [{"name": "python", "arguments": {"code": "1"}, "id": "c"}]}' > build/fuzz/seeds-toolcalls/generic
	printf '[TOOL_CALLS][{"name": "python", "arguments": {"code": "a\\u00e9\\ud83d\\ude00", "n": [1.5e2, true, {}]}, "id": "x"}]' \
	  > build/fuzz/seeds-toolcalls/mistral-array
	printf '{"type": "function", "name": "get_weather", "parameters": {"location": "Par\\"is", "days": -0}}' > build/fuzz/seeds-toolcalls/llama3
	cd build/fuzz && ./fuzz_toolcalls -max_total_time=$(FUZZ_SECONDS) -max_len=2048 seeds-toolcalls
# JSON Schema to GBNF, and the grammar parser over what it writes
fuzz-schema: build/fuzz/fuzz_schema fuzz-seeds
	cd build/fuzz && ./fuzz_schema -max_total_time=$(FUZZ_SECONDS) -max_len=4096 seeds-schema
# swa-server's request path (JSON body to prompt tokens and parameters), without HTTP; cJSON is
# Debian's build, so the coverage guiding the fuzzer is that of our field handling.
build/fuzz/fuzz_server: tests/fuzz/fuzz_server.c examples/server_request.c examples/server_request.h $(FUZZ_LIB)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer tests/fuzz/fuzz_server.c examples/server_request.c $(FUZZ_LIB) -o $@ -lcjson -lm -lpthread
ifeq ($(HAVE_SERVER),1)
fuzz-server: build/fuzz/fuzz_server
	@mkdir -p build/fuzz/seeds-server && cp tests/data/server-seeds/*.json build/fuzz/seeds-server/
	cd build/fuzz && SWA_FUZZ_VOCAB=../../examples/models/swa-stories.gguf ./fuzz_server -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=8192 seeds-server
else
fuzz-server:
	@echo "fuzz-server: cJSON is not installed (apt-get install libcjson-dev): the server's request parsing was not fuzzed"
endif

clean:
	rm -rf build

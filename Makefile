# swa.h - build, test and benchmark. `make` builds everything into build/.
CC      ?= cc
CXX     ?= c++
CFLAGS  ?= -std=c11 -O2 -Wall -Wextra -Wpedantic
LDLIBS  := -lm -lpthread
BUILD   := build
HEADERS := swa.h tools/gguf_writer.h

PROGRAMS := $(BUILD)/swa-generate $(BUILD)/swa-inspect $(BUILD)/swa-convert-llama2c \
            $(BUILD)/swa-tokenize $(BUILD)/swa-perplexity
TESTS    := $(patsubst tests/%.c,$(BUILD)/%,$(wildcard tests/test_*.c))
COMPILE_CHECKS := $(BUILD)/compile_cpp $(BUILD)/compile_static $(BUILD)/compile_two_tu

.PHONY: all programs tests test run clean cmocka
all: programs $(COMPILE_CHECKS) tests

programs: $(PROGRAMS)

$(BUILD):
	@mkdir -p $(BUILD)

$(BUILD)/swa-generate: examples/generate.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

$(BUILD)/swa-%: tools/%.c $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDLIBS)

# The library must also build as C++, as static functions, and from two translation units.
$(BUILD)/compile_cpp: tests/compile_cpp.cpp swa.h | $(BUILD)
	$(CXX) -std=c++11 -O2 -Wall -Wextra -Wpedantic -I. $< -o $@ $(LDLIBS)
$(BUILD)/compile_static: tests/compile_static.c swa.h | $(BUILD)
	$(CC) $(CFLAGS) -I. $< -o $@ $(LDLIBS)
$(BUILD)/compile_two_tu: tests/compile_two_tu_a.c tests/compile_two_tu_b.c swa.h | $(BUILD)
	$(CC) $(CFLAGS) -I. tests/compile_two_tu_a.c tests/compile_two_tu_b.c -o $@ $(LDLIBS)

tests: cmocka $(TESTS)

$(BUILD)/test_%: tests/test_%.c tests/testutil.h $(HEADERS) | $(BUILD)
	$(CC) $(CFLAGS) -I. $< -o $@ -lcmocka $(LDLIBS)

# cmocka comes from Debian's libcmocka-dev; tests/need-cmocka.sh installs it when it may.
cmocka:
	@CC="$(CC)" sh tests/need-cmocka.sh

test: all
	@set -e; for t in $(COMPILE_CHECKS) $(TESTS); do echo "== $$t"; $$t; done; echo "all tests passed"

# `make run`: a story from the stories260K model in ../shared, converted on first use.
MODEL  ?= $(BUILD)/stories260K.gguf
PROMPT ?= Once upon a time
run: $(BUILD)/swa-generate $(MODEL)
	$(BUILD)/swa-generate -m $(MODEL) -p "$(PROMPT)" -n 200

$(BUILD)/stories260K.gguf: | $(BUILD)/swa-convert-llama2c
	$(BUILD)/swa-convert-llama2c ../shared/models/stories260K.bin ../shared/models/tok512.bin $@

clean:
	rm -rf $(BUILD)

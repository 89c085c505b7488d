#ifndef FUZZ_H
#define FUZZ_H

/*
 * libFuzzer targets (bench/t/fuzz/fuzz-*.c): each defines
 * LLVMFuzzerTestOneInput() over one parser. Built by `make fuzz` with
 * clang, -fsanitize=fuzzer,address,undefined,float-cast-overflow and no
 * recovery, so any sanitizer report is a crash; replay.c runs the same
 * targets over their corpora without libFuzzer (make check, t8030).
 * A target must accept any bytes: errors are the expected answer, never
 * a crash, a leak or undefined behaviour.
 */

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#endif

/* Stand-in for the macOS SDK header (cross-check only; see README). */
#ifndef LMC_STUB_STDLIB_H
#define LMC_STUB_STDLIB_H
#include <stddef.h>
char *getenv(const char *);
const char *getprogname(void);
void free(void *);
#endif
